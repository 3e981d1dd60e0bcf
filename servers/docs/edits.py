"""Exact, reproducible text edits of a document's content (pure functions; the tools wrap them).

Matching is literal and case-sensitive. Headings are markdown ATX lines (``# Title`` … ``###### Title``);
a heading is named by its text without the ``#`` marks. Inserted text always lands on lines of its own.
"""

from __future__ import annotations

import re

from coworkenv.servers.kit import ServiceError

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
READ_HINT = "Read the document again with get_document and copy the text exactly as it appears."


def short(text: str, limit: int = 60) -> str:
    """A one-line preview of a text for messages and revision summaries."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def replace_text(content: str, find: str, text: str, replace_all: bool) -> tuple[str, int]:
    """Replace ``find`` by ``text``: the only occurrence, or every one with ``replace_all``. Returns (content, count)."""
    if not find:
        raise ServiceError("find is empty.", "Give the exact text to replace.")
    count = content.count(find)
    if count == 0:
        raise ServiceError(f"The text {short(find)!r} does not occur in the document.", READ_HINT)
    if count > 1 and not replace_all:
        raise ServiceError(
            f"The text {short(find)!r} occurs {count} times in the document.",
            "Include more of the surrounding text in find so it occurs once, or set replace_all to true.",
        )
    return content.replace(find, text), count


def append_text(content: str, text: str) -> str:
    """Add ``text`` at the end, on a new line when the content does not already end with one."""
    separator = "\n" if content and not content.endswith("\n") else ""
    return content + separator + text


def headings(content: str) -> list[tuple[int, int, str]]:
    """(line index, level, text) of every heading line."""
    out = []
    for index, line in enumerate(content.splitlines()):
        match = _HEADING.match(line)
        if match:
            out.append((index, len(match.group(1)), match.group(2)))
    return out


def _find_heading(content: str, heading: str) -> tuple[int, int]:
    wanted = heading.strip().lstrip("#").strip()
    found = [(index, level) for index, level, text in headings(content) if text == wanted]
    if len(found) == 1:
        return found[0]
    if not found:
        names = ", ".join(repr(text) for _, _, text in headings(content)) or "none"
        raise ServiceError(
            f"No heading {wanted!r} in the document.", f"Its headings are: {names}. Name one exactly as written."
        )
    raise ServiceError(
        f"The heading {wanted!r} occurs {len(found)} times in the document.",
        "Use operation 'replace' with a find text that includes the heading and the line after it instead.",
    )


def _insert_lines(lines: list[str], at: int, text: str) -> str:
    block = text if text.endswith("\n") else text + "\n"
    if at > 0 and lines[at - 1] == lines[at - 1].splitlines()[0]:  # the last line, without a line break
        lines[at - 1] += "\n"
    return "".join([*lines[:at], block, *lines[at:]])


def insert_after_heading(content: str, heading: str, text: str) -> str:
    """Insert ``text`` on its own line(s) directly below the heading line."""
    index, _ = _find_heading(content, heading)
    return _insert_lines(content.splitlines(keepends=True), index + 1, text)


def append_to_section(content: str, heading: str, text: str) -> str:
    """Insert ``text`` at the end of the heading's section: before the next heading of the same or a higher
    level (or the end of the document), and before the blank lines that close the section."""
    index, level = _find_heading(content, heading)
    lines = content.splitlines(keepends=True)
    end = next((i for i, lv, _ in headings(content) if i > index and lv <= level), len(lines))
    while end > index + 1 and not lines[end - 1].strip():
        end -= 1
    return _insert_lines(lines, end, text)
