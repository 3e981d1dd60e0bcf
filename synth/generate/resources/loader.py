"""Load a folder of a user's files (``coworkenv synth --from DIR``): ``.md``/``.markdown``/``.txt`` documents,
``.csv`` sheets, ``.eml`` mail and ``.ics`` calendars, found anywhere under the folder (hidden files and folders
left out). A file that cannot be loaded — another kind, too large, not UTF-8 text, a malformed CSV, message or
calendar — is one line in :attr:`ResourceSet.problems` naming it and why, and the rest goes on. A folder that is
missing, not a folder, or holds nothing loadable is a :class:`ResourceError` (one line).

Ids come from the files' paths (``notes/Offsite plan.md`` → ``notes_offsite_plan_md``), so the same folder
always loads into the same records.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from coworkenv.servers.files import table
from coworkenv.servers.kit import ServiceError
from coworkenv.synth.generate.resources.ics import parse_ics
from coworkenv.synth.generate.resources.mail import BadFile, parse_mail
from coworkenv.synth.generate.resources.model import Document, Event, Mail, ResourceSet, Sheet

MAX_BYTES = 512_000
"""The largest file loaded."""
MAX_FILES = 500
"""The most files looked at; the rest are one line."""
MAX_ROWS = 5_000
SUFFIXES = {".md": "document", ".markdown": "document", ".txt": "document", ".csv": "sheet", ".eml": "mail"}
SUFFIXES[".ics"] = "event"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


class ResourceError(ValueError):
    """A folder that cannot be used at all; the message is one line saying what to do."""


class _Loaded:
    def __init__(self) -> None:
        self.documents: list[Document] = []
        self.sheets: list[Sheet] = []
        self.mails: list[Mail] = []
        self.events: list[Event] = []
        self.problems: list[str] = []
        self.keys: set[str] = set()

    def key(self, path: str) -> str:
        base = key_of(path)
        key, n = base, 2
        while key in self.keys:
            key, n = f"{base}_{n}", n + 1
        self.keys.add(key)
        return key


def key_of(path: str) -> str:
    """The id a file's records get from its path: 'notes/Offsite plan.md' → 'notes_offsite_plan_md'."""
    return re.sub(r"[^a-z0-9]+", "_", path.lower()).strip("_")[:80].strip("_") or "file"


def load_resources(folder: str | Path) -> ResourceSet:
    """The records of every loadable file under ``folder``, in path order; see the module docstring."""
    root = Path(folder)
    shown = str(folder)
    if not root.exists():
        raise ResourceError(f"--from {shown}: no such folder; give a folder of .md, .txt, .csv, .eml or .ics files")
    if not root.is_dir():
        raise ResourceError(f"--from {shown}: not a folder; give the folder that holds the files")
    try:
        paths = sorted(
            (p for p in root.rglob("*") if p.is_file() and not _hidden(p.relative_to(root))),
            key=lambda p: p.relative_to(root).as_posix(),
        )
    except OSError as exc:
        raise ResourceError(f"--from {shown}: cannot list the folder: {exc.strerror or exc}") from None
    if not paths:
        raise ResourceError(f"--from {shown}: the folder is empty; put .md, .txt, .csv, .eml or .ics files in it")
    loaded = _Loaded()
    for p in paths[:MAX_FILES]:
        rel = p.relative_to(root).as_posix()
        try:
            _load_one(loaded, p, rel)
        except BadFile as exc:
            loaded.problems.append(f"skipped {rel}: {exc}")
    if len(paths) > MAX_FILES:
        loaded.problems.append(f"skipped {len(paths) - MAX_FILES} more file(s): only the first {MAX_FILES} are read")
    made = ResourceSet(
        folder=shown,
        documents=tuple(loaded.documents),
        sheets=tuple(loaded.sheets),
        mails=tuple(loaded.mails),
        events=tuple(loaded.events),
        problems=tuple(loaded.problems),
    )
    if not len(made):
        raise ResourceError(
            f"--from {shown}: none of its {len(paths)} file(s) could be loaded (.md, .txt, .csv, .eml and .ics are)"
        )
    return made


def _hidden(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts)


def _load_one(loaded: _Loaded, path: Path, rel: str) -> None:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise BadFile(f"unknown kind ({path.suffix or 'no extension'}); .md, .txt, .csv, .eml and .ics are loaded")
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise BadFile(f"too large ({size:,} bytes; at most {MAX_BYTES:,})")
        raw = path.read_bytes()
    except OSError as exc:
        raise BadFile(f"cannot be read ({exc.strerror or exc})") from None
    if not raw.strip():
        raise BadFile("is empty")
    _READERS[kind](loaded, raw, rel)


def _text(raw: bytes) -> str:
    if b"\x00" in raw:
        raise BadFile("holds binary data, not text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadFile(f"is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _document(loaded: _Loaded, raw: bytes, rel: str) -> None:
    text = _text(raw).strip() + "\n"
    name = rel.rsplit("/", 1)[-1]
    title = next((m.group(1) for line in text.splitlines() if (m := _HEADING.match(line))), None)
    if title is None:
        title = name.rsplit(".", 1)[0].replace("_", " ").replace("-", " ").strip() or name
    loaded.documents.append(Document(loaded.key(rel), rel, name, " ".join(title.split())[:300], text))


def _sheet(loaded: _Loaded, raw: bytes, rel: str) -> None:
    text = _text(raw)
    try:
        header, rows = table.parse(text)
    except ServiceError as exc:
        raise BadFile(exc.message.rstrip(".").replace("The CSV is ", "")) from None
    if len(rows) > MAX_ROWS:
        raise BadFile(f"has {len(rows):,} rows; at most {MAX_ROWS:,} are loaded")
    name = rel.rsplit("/", 1)[-1]
    loaded.sheets.append(Sheet(loaded.key(rel), rel, name, text, tuple(header), tuple(tuple(r) for r in rows)))


def _mail(loaded: _Loaded, raw: bytes, rel: str) -> None:
    if b"\x00" in raw:
        raise BadFile("holds binary data, not a message")
    mail = parse_mail(raw, rel)
    loaded.mails.append(replace(mail, id=loaded.key(rel)))


def _event(loaded: _Loaded, raw: bytes, rel: str) -> None:
    events = parse_ics(_text(raw), rel)
    base = loaded.key(rel)
    many = len(events) > 1
    loaded.events += [replace(e, id=f"{base}_{n}" if many else base) for n, e in enumerate(events, start=1)]


_READERS: dict[str, Callable[[_Loaded, bytes, str], None]] = {
    "document": _document,
    "sheet": _sheet,
    "mail": _mail,
    "event": _event,
}
