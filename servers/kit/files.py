"""Reading documents (seeds, tasks) and placing database files, with one-line errors for bad input.

Whatever a user hands the command line (a file that isn't UTF-8, JSON nested a hundred thousand deep,
YAML with a syntax error, a folder that doesn't exist) ends in a :class:`DocumentError` or an
:class:`~coworkenv.servers.kit.errors.EnvironmentConfigError` whose message is one line and says what to
do, never a traceback.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from coworkenv.servers.kit import atomic
from coworkenv.servers.kit.errors import EnvironmentConfigError

MAX_DEPTH = 64
"""The deepest nesting a document may have: seeds and tasks are a few levels deep; deeper is a mistake."""

MAX_DOCUMENT_BYTES = 256 * 1024 * 1024

SQLITE_HEADER = b"SQLite format 3\x00"


class DocumentError(ValueError):
    """A document file that cannot be read as JSON or YAML; the message is one line."""


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large document is parsed and validated.

    Parsing allocates millions of objects and no cycles; each allocation burst triggers collections that walk
    everything allocated so far, which made loading a task of 100k checks spend two thirds of its time in the
    collector (measured: 2.4 s of CPU, 0.8 s paused). The collector runs again afterwards as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` containers (checked level by level, without recursion, in
    time linear in the number of values)."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            below.extend([v for v in (item.values() if isinstance(item, dict) else item) if isinstance(v, dict | list)])
        level = below
    return False


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader that refuses aliases (``*name``): an alias repeats a node without copying its text,
    so ~500 bytes of nested aliases (a "billion laughs" document) expand to billions of values and minutes of
    CPU. Seeds, tasks, plans and configs never need one."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None,
                None,
                f"aliases (*{event.anchor}) are not allowed; write the value out in full",
                event.start_mark,
            )
        return super().compose_node(parent, index)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` without aliases: one that uses one is a :class:`yaml.YAMLError` at the alias."""
    return yaml.load(text, Loader=_NoAliasLoader)  # a SafeLoader subclass: safe


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What a YAML error says, with its line and column, without the multi-line excerpt PyYAML adds."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    if mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return str(problem)


def read_document(path: str | Path, what: str = "seed") -> Any:
    """Parse a .json, .yaml or .yml file; a one-line :class:`DocumentError` for anything that goes wrong."""
    p = Path(path)
    is_yaml = p.suffix.lower() in (".yaml", ".yml")
    kind = "YAML" if is_yaml else "JSON"
    try:
        if p.stat().st_size > MAX_DOCUMENT_BYTES:
            raise DocumentError(f"{what} file {p} is larger than {MAX_DOCUMENT_BYTES // 2**20} MiB; split it up")
        raw = p.read_bytes()
    except OSError as exc:
        raise DocumentError(f"cannot read {what} file {p}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            f"{what} file {p} is not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8"
        ) from exc
    too_deep = f"{what} file {p} nests deeper than {MAX_DEPTH} levels; flatten it"
    try:
        with gc_paused():
            data = load_yaml(text) if is_yaml else json.loads(text)
    except RecursionError as exc:
        raise DocumentError(too_deep) from exc
    except json.JSONDecodeError as exc:
        raise DocumentError(
            f"{what} file {p} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from exc
    except yaml.YAMLError as exc:
        raise DocumentError(one_line(f"{what} file {p} is not valid YAML: {yaml_problem(exc)}")) from exc
    except (ValueError, OverflowError) as exc:  # e.g. a number JSON or YAML cannot represent
        raise DocumentError(one_line(f"{what} file {p} is not valid {kind}: {exc}")) from exc
    if depth_exceeds(data, MAX_DEPTH):
        raise DocumentError(too_deep)
    return data


# ---------------------------------------------------------------------- database files
def check_database_file(path: Path, service: str) -> None:
    """Refuse a path that exists but cannot be one of our databases (a folder, not SQLite)."""
    if path.is_dir():
        raise EnvironmentConfigError(f"{path} is a folder; pass --db a file path such as {path / f'{service}.db'}")
    try:
        with path.open("rb") as fh:
            header = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise EnvironmentConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if header and header != SQLITE_HEADER:
        raise EnvironmentConfigError(
            f"{path} is not a SQLite database; pass a new file (or one `coworkenv serve {service}` created)"
        )


def is_empty_file(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size == 0
    except OSError:
        return False


def new_temp_beside(path: Path) -> Path:
    """A fresh empty file in ``path``'s folder (so a rename onto ``path`` is atomic)."""
    try:
        fd, name = atomic.temp_beside(path)
    except OSError as exc:
        raise EnvironmentConfigError(
            f"cannot create the database {path}: {exc.strerror or exc}; pass --db a file in a writable folder"
        ) from exc
    os.close(fd)
    return name


DATABASE_COMPANIONS = ("-wal", "-shm", "-journal")


def remove_dead_temps(path: Path) -> list[Path]:
    """Remove the temporary databases (and their WAL companions) that a killed build of ``path`` left
    beside it; those of a build still running in another process are left alone."""
    try:
        return atomic.remove_temp_files(path.parent, path.name, DATABASE_COMPANIONS)
    except OSError:  # a folder we cannot list or clean: the build itself will say what is wrong
        return []


def remove_database(path: Path) -> None:
    """Delete a database file and its WAL companions (missing ones are fine)."""
    for suffix in ("", *DATABASE_COMPANIONS):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def checkpoint_and_drop_wal(path: Path) -> None:
    """Fold a database's WAL into its main file and remove the WAL companions, so another file can be
    renamed onto it without a stale WAL being replayed onto the new one."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    finally:
        conn.close()
    if busy:
        raise EnvironmentConfigError(f"{path} is in use by another process; stop its server, then reset it")
    for suffix in ("-wal", "-shm"):  # the last close removes them; a leftover must not meet the new file
        Path(f"{path}{suffix}").unlink(missing_ok=True)


__all__ = [
    "DATABASE_COMPANIONS",
    "MAX_DEPTH",
    "DocumentError",
    "check_database_file",
    "checkpoint_and_drop_wal",
    "gc_paused",
    "is_empty_file",
    "load_yaml",
    "new_temp_beside",
    "one_line",
    "read_document",
    "remove_database",
    "remove_dead_temps",
    "yaml_problem",
]
