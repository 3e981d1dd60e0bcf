"""File and folder names the exporters write: cut in UTF-8 bytes, so they fit common file systems.

ext4, APFS, NTFS and most others allow 255 bytes per name (not 255 characters: a name of 100 four-byte
characters is 400 bytes and is refused with "File name too long").
"""

from __future__ import annotations

NAME_BYTES = 255
"""The longest name (one path component) common file systems accept, in bytes."""


def cut_bytes(name: str, limit: int = NAME_BYTES) -> str:
    """``name`` cut to at most ``limit`` bytes of UTF-8, never inside a character."""
    data = name.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return name
    return data[:limit].decode("utf-8", "ignore")


def fit_name(stem: str, prefix: str = "", suffix: str = "", limit: int = NAME_BYTES) -> str:
    """``prefix + stem + suffix`` with ``stem`` cut so the whole name is at most ``limit`` bytes."""
    room = limit - len(prefix.encode("utf-8")) - len(suffix.encode("utf-8"))
    return f"{prefix}{cut_bytes(stem, max(room, 0))}{suffix}"
