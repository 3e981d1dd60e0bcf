"""How a command of the ``coworkenv`` line ends when something unexpected goes wrong: in one line, never a
traceback. :class:`CommandGroup` (the services' group, and the top-level ``coworkenv`` one) turns a file-system
error into :func:`os_error_line` and anything else into a line asking for a report (``COWORKENV_TRACEBACK=1``
shows the traceback).
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

import click

from coworkenv.servers.kit.files import one_line

TRACEBACK_ENV = "COWORKENV_TRACEBACK"
"""Set to 1 to see the traceback of an unexpected error instead of its one-line summary."""


def os_error_line(exc: OSError) -> str:
    """What went wrong with a file or folder, in one line that says what to do."""
    path = exc.filename if exc.filename is not None else ""
    what = exc.strerror or str(exc) or type(exc).__name__
    advice = {
        errno.ENOSPC: "free some disk space and run the command again",
        errno.EACCES: "pass a path you may write to, or change its permissions",
        errno.EPERM: "pass a path you may write to, or change its permissions",
        errno.EROFS: "pass a path on a writable file system",
        errno.ENOENT: "check the path (a folder on it may be missing or not creatable)",
        errno.ENOTDIR: "a part of the path is a file, not a folder: pass another path",
        errno.EISDIR: "the path is a folder: pass a file path",
    }.get(exc.errno or 0, "check the path and run the command again")
    where = f" {path}" if path else ""
    return one_line(f"cannot use{where}: {what}; {advice}", 2000)


class CommandGroup(click.Group):
    """A command group whose commands never end in a traceback: a file-system error becomes one line naming
    the path and what to do; any other unexpected error becomes one line asking for a report
    (``COWORKENV_TRACEBACK=1`` shows the traceback). A closed output pipe (``| head``) ends quietly."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except BrokenPipeError:
            _quiet_broken_pipe()
        except OSError as exc:
            if os.environ.get(TRACEBACK_ENV):
                raise
            raise click.ClickException(os_error_line(exc)) from exc
        except Exception as exc:
            if os.environ.get(TRACEBACK_ENV):
                raise
            detail = one_line(f"{type(exc).__name__}: {exc}", 600)
            raise click.ClickException(
                f"unexpected error ({detail}); nothing more was done. Please report it with the command you ran "
                f"(set {TRACEBACK_ENV}=1 to see the traceback)"
            ) from exc


def _quiet_broken_pipe() -> None:
    """The reader of our output went away: stop without a second error when Python flushes stdout at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    raise click.exceptions.Exit(1)
