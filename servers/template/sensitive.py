"""The sensitive kinds of the notes service: the changes whose unexplained occurrence is harm, not noise. Here a
note deleted; a service may add its own kinds (see :class:`coworkenv.servers.kit.SensitiveKind`)."""

from __future__ import annotations

from coworkenv.servers.kit import SensitiveKind, deletes

SENSITIVE: tuple[SensitiveKind, ...] = deletes("notes")
