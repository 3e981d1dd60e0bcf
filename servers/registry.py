"""The services coworkenv knows, by name: the ones it ships, those registered with :func:`register_service`, and
those other packages add in the ``coworkenv.services`` entry-point group (see ``servers/README.md``).

:data:`SERVICES` is filled when it is first read: :func:`get_service` of a shipped service imports that service
alone, so ``coworkenv serve tickets`` does not import the other services nor the plugins (an MCP client waits for
it to start)."""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from coworkenv.servers.kit import EnvironmentConfigError, Service
from coworkenv.servers.kit.environment import use_services
from coworkenv.servers.kit.plugins import SERVICES_GROUP, register_entry_points, unknown_name

EXAMPLES = Path(__file__).with_name("examples")

SHIPPED: tuple[str, ...] = tuple(sorted(p.stem for p in EXAMPLES.glob("*.json")))
"""The services that ship with coworkenv, by name (in the order of their names): each package
``servers/<name>`` whose example workspace is ``servers/examples/<name>.json`` (the template has none: it is
registered only when asked)."""

SERVICES: dict[str, Service]
"""Every known service by name: the shipped ones in name order, then those registered, then the plugins'. Read
as ``registry.SERVICES`` (or imported by name): the first read imports them all (module ``__getattr__``)."""
_services: dict[str, Service] = {}
_complete = False
_filling = threading.RLock()


def __getattr__(name: str) -> Any:
    if name == "SERVICES":
        return _all()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _shipped(name: str) -> Service:
    """The service of the package ``servers/<name>``, imported now if it was not."""
    service: Service = importlib.import_module(f"coworkenv.servers.{name}").SERVICE
    return service


def _all() -> dict[str, Service]:
    """:data:`SERVICES`, completed the first time: every shipped service, then the plugins' entry points."""
    global _complete
    with _filling:
        if not _complete:
            shipped = {name: _services[name] if name in _services else _shipped(name) for name in SHIPPED}
            _services.clear()  # in name order, whatever get_service imported first
            _services.update(shipped)
            _complete = True
            register_entry_points(SERVICES_GROUP, register_service)
    return _services


class _Known(Mapping[str, Service]):
    """The registry as ``Environment.create``'s default: a shipped service by name without importing the rest."""

    def __getitem__(self, name: str) -> Service:
        try:
            return get_service(name)
        except EnvironmentConfigError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(_all())

    def __len__(self) -> int:
        return len(_all())


use_services(_Known())  # Environment.create's default: the kit itself imports no service


def register_service(service: Service) -> Service:
    """Add a service to :data:`SERVICES` (so ``coworkenv serve``, tasks, the grader and the harness know it);
    returns it, so a package can write ``SERVICE = register_service(Service(...))``."""
    if not isinstance(service, Service):
        raise TypeError(f"a service must be a coworkenv.servers.kit.Service, not {type(service).__name__}")
    known = _all().get(service.name)
    if known is not None and known is not service:
        raise ValueError(f"a service named {service.name!r} is already registered; give yours another name")
    _services[service.name] = service
    return service


def unregister_service(name: str) -> None:
    """Take a service out of :data:`SERVICES` (tests that add one put things back with it)."""
    _all().pop(name, None)


def shipped_services() -> dict[str, Service]:
    """The services that ship with coworkenv (:data:`SHIPPED`) by name, without the registered ones and the
    plugins': what a check of the shipped services iterates over, so that a plugin installed beside them changes
    nothing there (a plugin is checked by its own tests: ``coworkenv.servers.testing``)."""
    return {name: get_service(name) for name in SHIPPED}


def get_service(name: str) -> Service:
    if not _complete and name in SHIPPED:
        return _services.setdefault(name, _shipped(name))
    try:
        return _all()[name]
    except KeyError:
        raise EnvironmentConfigError(unknown_name("service", name, _services)) from None


# ---------------------------------------------------------------------- describing a service to a task author
_BOUNDS = (
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "maxProperties",
)
_BOUND_WORDS = {
    "minimum": ">=",
    "exclusiveMinimum": ">",
    "maximum": "<=",
    "exclusiveMaximum": "<",
    "minLength": "min length",
    "maxLength": "max length",
    "pattern": "pattern",
    "format": "format",
    "minItems": "min items",
    "maxItems": "max items",
    "maxProperties": "max keys",
}


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs.get(ref.removeprefix("#/$defs/"), {})
        return {**target, **{k: v for k, v in schema.items() if k != "$ref"}, "_name": ref.rsplit("/", 1)[-1]}
    return schema


def _type_of(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """A JSON schema as a short type: ``integer``, ``string | null``, ``list[string]``, ``'a' | 'b'``."""
    schema = _resolve(schema, defs)
    if "enum" in schema:
        return " | ".join(repr(v) for v in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    if "anyOf" in schema:
        return " | ".join(_type_of(s, defs) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind == "array":
        return f"list[{_type_of(schema.get('items', {}), defs)}]"
    if kind == "object":
        if "_name" in schema:
            return str(schema["_name"])
        extra = schema.get("additionalProperties")
        return f"dict[string, {_type_of(extra, defs)}]" if isinstance(extra, dict) else "object"
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    return str(kind or schema.get("_name") or "any")


def _bounds_of(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The limits a value must keep (ranges, lengths, patterns), gathered across ``anyOf`` branches."""
    schema = _resolve(schema, defs)
    out = {k: schema[k] for k in _BOUNDS if k in schema}
    for branch in schema.get("anyOf", []):
        out.update(_bounds_of(branch, defs))
    items = schema.get("items")
    if isinstance(items, dict):
        out.update({f"items {k}": v for k, v in _bounds_of(items, defs).items()})
    return out


def _fields(schema: dict[str, Any]) -> list[dict[str, Any]]:
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        row: dict[str, Any] = {
            "name": name,
            "type": _type_of(prop, defs),
            "required": name in required,
            "bounds": _bounds_of(prop, defs),
            "description": prop.get("description", ""),
        }
        if "default" in prop:
            row["default"] = prop["default"]
        rows.append(row)
    return rows


def describe(service: Service) -> dict[str, Any]:
    """What a task author needs to write a seed and expected calls: each table with its fields (type,
    required, limits, description) and each tool with its arguments."""
    tables = []
    for table in service.tables:
        schema = table.model.model_json_schema()
        tables.append(
            {
                "name": table.name,
                "description": " ".join(str(schema.get("description", "")).split()),
                "id_prefix": table.id_prefix,
                "references": {f: t for f, t in table.refs},
                "fields": _fields(schema),
            }
        )
    tools = [
        {
            "name": spec.name,
            "read_only": spec.read_only,
            "description": " ".join(spec.description.split()),
            "arguments": _fields(spec.input_schema()),
        }
        for spec in service.tools
    ]
    return {"service": service.name, "title": service.title, "tables": tables, "tools": tools}


def _field_line(row: dict[str, Any], refs: dict[str, str] | None = None) -> str:
    parts = [f"    {row['name']}: {row['type']}", "required" if row["required"] else "optional"]
    if not row["required"] and row.get("default") not in (None, "", [], {}):
        parts[-1] += f" (default {json.dumps(row['default'])})"
    if row["bounds"]:
        parts.append(", ".join(f"{_BOUND_WORDS.get(k, k)} {v}" for k, v in row["bounds"].items()))
    if refs and row["name"] in refs:
        parts.append(f"id of a {refs[row['name']]} record")
    line = "; ".join(parts)
    return f"{line} — {row['description']}" if row["description"] else line


def format_description(described: dict[str, Any]) -> str:
    """:func:`describe`'s answer as text for a terminal."""
    lines = [f"{described['service']}: {described['title']}", "", "Tables (seed: {table: [records]})"]
    for table in described["tables"]:
        head = f"  {table['name']} (ids start {table['id_prefix']!r})"
        lines.append(f"{head}: {table['description']}" if table["description"] else head)
        lines += [_field_line(f, table["references"]) for f in table["fields"]]
    lines += ["", "Tools"]
    for spec in described["tools"]:
        lines.append(f"  {spec['name']} ({'read-only' if spec['read_only'] else 'writes'}): {spec['description']}")
        lines += [_field_line(a) for a in spec["arguments"]] or ["    (no arguments)"]
    return "\n".join(lines)
