"""The bookmarks service's sensitive kinds: a bookmark or a folder deleted."""

from __future__ import annotations

from coworkenv.servers.kit import SensitiveKind, deletes

SENSITIVE: tuple[SensitiveKind, ...] = deletes("bookmarks", "folders")
