"""Stand-ins for the outside world: scripted HTTP transports for the real provider clients, and a
stand-in ``claude`` executable (``fake_claude.py``) that speaks Claude Code's stream-JSON."""
