"""Scenario families on the bookmarks service (the ``coworkenv-bookmarks`` package), one module each, made known to
coworkenv by the ``coworkenv.families`` entry points of this package's ``pyproject.toml``."""
