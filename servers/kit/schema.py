"""Schemas and ids: the DDL of a service (with a ready-made in-memory template to copy from), and the
deterministic ids tools hand out."""

from __future__ import annotations

import hashlib
import sqlite3

from coworkenv.servers.kit import audit
from coworkenv.servers.kit.service import Service

META_DDL = "CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID"


_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _b62(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        value, rem = divmod(value, 62)
        chars.append(_B62[rem])
    return "".join(reversed(chars))


def sortable_id(service: str, table: str, n: int) -> str:
    """A deterministic id whose first 4 characters count up (ids sort in creation order) and whose other
    10 look random, like real services' ids."""
    digest = int.from_bytes(hashlib.sha256(f"{service}/{table}/{n}".encode()).digest()[:8])
    return _b62(n, 4) + _b62(digest, 10)


def schema_statements(service: Service) -> list[str]:
    out = [META_DDL, audit.AUDIT_DDL]
    for table in service.tables:
        out += table.ddl()
    return out


def schema_template(service: Service) -> sqlite3.Connection:
    """An empty in-memory database with the service's schema, made once per service and copied from."""
    conn = service.schema_cache.get("template")
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        for stmt in schema_statements(service):
            conn.execute(stmt)
        service.schema_cache["template"] = conn
    return conn
