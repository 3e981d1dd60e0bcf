"""Reading a Claw-Eval checkout for the importer: its task folders, each ``task.yaml``, the fixture files of each
service, and the newest date they hold.

Everything read here comes from the user's checkout; nothing of Claw-Eval is part of coworkenv. A problem with one
task is a :class:`Refused` (one line, and a short group for the summary), never an exception that stops the import.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from coworkenv.servers.kit.files import DocumentError, one_line, read_document


class NotACheckout(ValueError):
    """The folder given is not a Claw-Eval checkout."""


class Refused(Exception):
    """A task the importer does not import: ``reason`` (one line, for its report entry) and ``group`` (the same
    reason without the task's details, counted in the summary)."""

    def __init__(self, reason: str, group: str | None = None) -> None:
        super().__init__(reason)
        self.reason = one_line(reason, 500)
        self.group = group or self.reason


def task_folders(checkout: Path) -> list[Path]:
    """The folders of ``CHECKOUT/tasks`` (hidden ones left out), sorted by name."""
    tasks = checkout / "tasks"
    if not tasks.is_dir():
        raise NotACheckout(f"{checkout} is not a Claw-Eval checkout: no tasks/ folder")
    return sorted(p for p in tasks.iterdir() if p.is_dir() and not p.name.startswith("."))


def read_task_yaml(folder: Path) -> dict[str, Any]:
    """The folder's ``task.yaml`` as a mapping; :class:`Refused` when it is missing or malformed."""
    path = folder / "task.yaml"
    if not path.is_file():
        raise Refused("no task.yaml in the task folder", "no task.yaml")
    try:
        data = read_document(path, "task")
    except DocumentError as exc:
        detail = str(exc).replace(f"task file {path} is ", "").replace(f"task file {path} ", "")
        raise Refused(f"malformed task.yaml: {detail}", "malformed task.yaml") from exc
    if not isinstance(data, dict):
        raise Refused(f"malformed task.yaml: a mapping expected, got {type(data).__name__}", "malformed task.yaml")
    return data


def listed(data: Mapping[str, Any], key: str) -> list[Any]:
    """``data[key]`` as a list (absent or null: empty); :class:`Refused` when it is something else."""
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refused(f"malformed task.yaml: {key} must be a list, got {type(value).__name__}", "malformed task.yaml")
    return value


def mapping(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` as a mapping (absent or null: empty); :class:`Refused` when it is something else."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Refused(
            f"malformed task.yaml: {key} must be a mapping, got {type(value).__name__}", "malformed task.yaml"
        )
    return value


def named_entries(data: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """The entries of a list of ``{name: ...}`` mappings (services, tools); :class:`Refused` for a bad entry."""
    out = []
    for index, entry in enumerate(listed(data, key)):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise Refused(f"malformed task.yaml: {key}[{index}] has no name", "malformed task.yaml")
        out.append(entry)
    return out


# ---------------------------------------------------------------------------------------------- fixtures
_DEFAULT_FIXTURE = re.compile(
    r'os\.environ\.get\(\s*"[A-Z_]+_FIXTURES?"\s*,\s*str\(\s*Path\(__file__\)(?:\.resolve\(\))?'
    r'((?:\.parent)+)((?:\s*/\s*"[^"\\]+")+)\s*\)'
)


def mock_default_fixture(checkout: Path, service: str) -> Path | None:
    """The fixture file the checkout's mock of ``service`` loads when no ``*_FIXTURES`` variable names one, as its
    ``server.py`` writes it (``os.environ.get("X_FIXTURES", str(Path(__file__)....parent / "tasks" / ...))``);
    None when it names none this way."""
    server = checkout / "mock_services" / service / "server.py"
    try:
        text = server.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = _DEFAULT_FIXTURE.search(text)
    if found is None:
        return None
    base = server.resolve()
    for _ in range(found.group(1).count(".parent")):
        base = base.parent
    parts = re.findall(r'"([^"\\]+)"', found.group(2))
    path = base.joinpath(*parts)
    return path if path.resolve().is_relative_to(checkout.resolve()) else None


def _fixture_paths(checkout: Path, folder: Path, service: Mapping[str, Any]) -> list[Path]:
    """The fixture files of one service entry: what its ``*_FIXTURES`` env entries name (a file, or a folder's
    JSON files), relative to the checkout root as Claw-Eval starts its mocks there; without such an entry, the file
    the mock loads by default (:func:`mock_default_fixture`: often another task's, e.g. an English variant's mock
    loads its Chinese peer's fixtures, and so does Claw-Eval), else the JSON files of the task's own
    ``fixtures/<service>/`` folder."""
    env = service.get("env") or {}
    named = (
        [str(v) for k, v in env.items() if str(k).upper().endswith(("_FIXTURES", "_FIXTURE"))]
        if isinstance(env, dict)
        else []
    )
    if not named:
        default = mock_default_fixture(checkout, str(service["name"]))
        if default is not None:
            return [default]
        own = folder / "fixtures" / str(service["name"])
        return sorted(own.glob("*.json")) if own.is_dir() else []
    paths: list[Path] = []
    for value in named:
        path = checkout / value
        paths += sorted(path.glob("*.json")) if path.is_dir() else [path]
    return paths


def read_fixtures(checkout: Path, folder: Path, service: Mapping[str, Any]) -> dict[str, Any]:
    """One service's fixture files as Claw-Eval's mock loads them: file name → parsed JSON."""
    name = str(service["name"])
    out: dict[str, Any] = {}
    for path in _fixture_paths(checkout, folder, service):
        shown = path.relative_to(checkout) if path.is_relative_to(checkout) else path
        if not path.is_file():
            raise Refused(f"fixture file {shown} of {name} is missing", f"missing fixtures of {name}")
        try:
            out[path.name] = read_document(path, "fixture")
        except DocumentError as exc:
            raise Refused(str(exc).replace(str(path), str(shown)), f"unreadable fixtures of {name}") from exc
    return out


_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?(?:Z|[+-]\d{2}:?\d{2})?$",
)


def _values(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            yield item


def newest_date(documents: Any) -> datetime | None:
    """The latest ISO date or time written in any string of ``documents`` (naive ones taken as UTC)."""
    newest: datetime | None = None
    for value in _values(documents):
        if not isinstance(value, str) or len(value) > 40 or not _DATE.match(value.strip()):
            continue
        text = value.strip().replace(" ", "T", 1)
        try:
            found = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            continue
        found = found if found.tzinfo else found.replace(tzinfo=UTC)
        newest = found if newest is None or found > newest else newest
    return newest
