"""CSV files read as rows (pure functions; the tools wrap them).

The first line is the header; every other non-blank line must have exactly as many fields. Quoting follows
RFC 4180 (fields with commas, quotes or line breaks in double quotes, quotes doubled inside). A file that breaks
these rules is refused with the line and what is wrong, never half read.
"""

from __future__ import annotations

import csv
import io

from coworkenv.servers.kit import ServiceError

FIX = "Read it as text with read_file, and fix it with write_file if it should be a table."


def parse(content: str) -> tuple[list[str], list[list[str]]]:
    """(header, data rows) of a CSV text; a business error naming the line for a malformed one."""
    reader = csv.reader(io.StringIO(content, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    try:
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # a blank line
            if header is None:
                header = _header(row, reader.line_num)
            elif len(row) != len(header):
                raise ServiceError(
                    f"The CSV is malformed: line {reader.line_num} has {len(row)} fields, the header has "
                    f"{len(header)}.",
                    FIX,
                )
            else:
                rows.append(row)
    except csv.Error as exc:
        raise ServiceError(f"The CSV is malformed at line {reader.line_num}: {exc}.", FIX) from None
    if header is None:
        raise ServiceError("The CSV is empty: it has no header line.", FIX)
    return header, rows


def _header(row: list[str], line: int) -> list[str]:
    names = [name.strip() for name in row]
    if any(not name for name in names):
        raise ServiceError(f"The CSV is malformed: the header (line {line}) has an empty column name.", FIX)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ServiceError(f"The CSV is malformed: the header repeats the column {repeated[0]!r}.", FIX)
    return names
