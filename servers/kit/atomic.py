"""Writing a file a user keeps so that a crash never leaves it torn: the one atomic writer of the project.

The text goes to a temporary file in the target's own folder (so the rename cannot cross file systems), is
flushed and fsynced, and is then renamed onto the target, and the folder is fsynced so the rename itself
survives a power cut. A kill at any point leaves either the old file whole or the new file whole, plus at
worst a hidden ``.NAME.PID.*.tmp`` that :func:`remove_temp_files` clears once its writer (process PID) is
gone. An error while writing removes the temporary file and leaves the target as it was.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from glob import escape as glob_escape
from pathlib import Path
from typing import IO, Any

TEMP_SUFFIX = ".tmp"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()
"""The permissions a plain ``open(path, "w")`` gives a new file (``mkstemp`` alone gives 0600)."""


_NAME_BYTES = 255  # a file name's limit on common file systems
_TEMP_EXTRA = 1 + 1 + 10 + 1 + 8 + len(TEMP_SUFFIX)  # ".", ".PID" (up to 10 digits), ".", mkstemp's 8, ".tmp"


def temp_stem(name: str) -> str:
    """``name`` as a temporary file's name holds it: cut (in UTF-8 bytes, never inside a character) so that
    ``.NAME.PID.RANDOM.tmp`` fits a file system's 255 bytes even for a target whose own name is that long."""
    raw = name.encode("utf-8")[: _NAME_BYTES - _TEMP_EXTRA]
    return raw.decode("utf-8", errors="ignore")


def temp_beside(path: Path) -> tuple[int, Path]:
    """An open descriptor and the path of a fresh hidden temporary file in ``path``'s folder, named
    ``.NAME.PID.RANDOM.tmp`` so that a later cleaner can tell a dead writer's leftover from a live one's."""
    prefix = f".{temp_stem(path.name)}.{os.getpid()}."
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=TEMP_SUFFIX, dir=path.parent)
    return fd, Path(name)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def fsync_folder(folder: Path) -> None:
    """Make a rename or a new entry in ``folder`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: str | Path, mode: int | None = None, sync_folder: bool = True) -> Iterator[Path]:
    """``with atomic_path(path) as tmp: save(tmp)``: for writers that take a path (a library's save, a copy).
    ``tmp`` is a hidden file beside ``path``; when the block ends without an error it is fsynced, given
    ``mode`` (default: what ``open(path, "w")`` gives) and renamed onto ``path``; otherwise it is removed.
    ``sync_folder=False`` leaves the folder's fsync (the rename's durability) to the caller, who writes many
    files and syncs the folder once."""
    target = Path(path)
    fd, tmp = temp_beside(target)
    os.close(fd)
    try:
        yield tmp
        with tmp.open("rb+") as handle:
            os.fsync(handle.fileno())
        tmp.chmod(_MODE if mode is None else mode)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync_folder:
        fsync_folder(target.parent)


@contextmanager
def atomic_open(path: str | Path, mode: int | None = None, sync_folder: bool = True) -> Iterator[IO[str]]:
    """``with atomic_open(path) as f: f.write(...)``: ``path`` appears (or is replaced) with what was written,
    UTF-8, only when the block ends without an error; otherwise it is left as it was."""
    with atomic_path(path, mode, sync_folder) as tmp, tmp.open("w", encoding="utf-8", newline="") as handle:
        yield handle


def write_atomic(path: str | Path, text: str, mode: int | None = None, sync_folder: bool = True) -> None:
    """Write ``text`` (UTF-8) to ``path`` through :func:`atomic_open`: the old file or the new, never torn."""
    with atomic_open(path, mode, sync_folder) as handle:
        handle.write(text)


def remove_temp_files(folder: Path, name: str = "*", companions: tuple[str, ...] = ()) -> list[Path]:
    """Remove the temporary files that a killed writer left in ``folder`` for the file ``name`` (or any
    file): each ``.NAME.PID.*.tmp`` whose process PID is gone, and its ``companions`` (suffixes such as
    ``-wal``). A live writer's files are left alone. Returns what was removed."""
    removed = []
    stem = name if name == "*" else glob_escape(temp_stem(name))
    for leftover in sorted(folder.glob(f".{stem}.*{TEMP_SUFFIX}")):
        pid = leftover.name[: -len(TEMP_SUFFIX)].rsplit(".", 2)[-2]
        if not leftover.is_file() or not pid.isdigit() or _alive(int(pid)):
            continue
        for path in (leftover, *(Path(f"{leftover}{suffix}") for suffix in companions)):
            if path.exists():
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


# ------------------------------------------------------------------------------------------ appended JSON lines
@dataclass
class JsonLines:
    """What :func:`read_json_lines` found: the whole lines (number, text, value) and where the good part ends."""

    lines: list[tuple[int, str, Any]] = field(default_factory=list)
    good: int = 0
    """Bytes of the file up to the end of its last whole line."""
    torn: int = 0
    """Bytes after that: a last line cut short by a crash (0 when there is none)."""
    torn_line: int = 0
    """The number of that torn line (0 when there is none)."""

    def torn_note(self, path: Path) -> str:
        """One line saying what was dropped, for a warning ("" when nothing was)."""
        if not self.torn:
            return ""
        return (
            f"{path}: dropped a torn last line (line {self.torn_line}, {self.torn} bytes) that an interrupted "
            "writer left; the records before it are kept"
        )


def read_json_lines(path: Path) -> JsonLines:
    """The JSON lines of an append-only file written one whole line at a time (write, flush, fsync).

    A last line cut short (no newline, or not JSON: a kill mid-write) is left out and counted in ``torn``; a
    bad line anywhere else is a ``ValueError`` naming it. A missing file has no lines.
    """
    found = JsonLines()
    if not path.exists():
        return found
    data = path.read_bytes()
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        text = raw.decode("utf-8", errors="replace").strip()
        last = found.good + len(raw) >= len(data)
        if not text and raw.endswith(b"\n"):
            found.good += len(raw)
            continue
        try:
            value = json.loads(text) if text else None
        except json.JSONDecodeError:
            if not last:
                raise ValueError(f"{path}:{number}: not valid JSON (only the last line may be torn)") from None
            value, raw = None, b""
        if not raw.endswith(b"\n"):
            found.torn, found.torn_line = len(data) - found.good, number
            break
        found.lines.append((number, text, value))
        found.good += len(raw)
    return found


def append_line(handle: IO[str], text: str) -> None:
    """Append one whole line to a file opened for appending and make it durable before returning."""
    handle.write(text + "\n")
    handle.flush()
    os.fsync(handle.fileno())


__all__ = [
    "TEMP_SUFFIX",
    "JsonLines",
    "append_line",
    "atomic_open",
    "atomic_path",
    "fsync_folder",
    "read_json_lines",
    "remove_temp_files",
    "temp_beside",
    "write_atomic",
]
