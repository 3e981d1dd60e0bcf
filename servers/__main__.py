"""``python -m coworkenv.servers``: the services' own command line (works without the other packages)."""

from coworkenv.servers.cli import main

if __name__ == "__main__":
    main()
