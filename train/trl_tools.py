"""Python tool methods generated from the services' tool specs, for trl's ``environment_factory``.

trl turns each public method of an environment class into a tool: transformers' ``get_json_schema`` reads the
method's type hints and its Google-style docstring, and trl calls it with the model's arguments as keywords.
The one source here is each service's :class:`~coworkenv.servers.kit.ToolSpec` (the input schema the MCP door
serves): :func:`signature_of` turns that JSON Schema into a typed ``inspect.Signature`` and :func:`docstring_of`
into the docstring, so the schema the model sees is the MCP schema less the validation bounds that Python type
hints cannot say (lengths, ranges, patterns: :func:`plain_schema` is exactly that projection). The bounds still
hold: the call goes to the kit, which validates the arguments as the MCP door does and answers a bad value with
the same invalid-arguments message.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal

from coworkenv.harness.messages import qualified_name
from coworkenv.servers.kit import ToolSpec

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}
_KEPT = ("type", "enum", "items", "additionalProperties", "anyOf")
Caller = Callable[[str, str, dict[str, Any]], Any]


def _deref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return dict(root.get("$defs", {}).get(ref.split("/")[-1], {"type": "object"}))
    return schema


def python_type(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """The type hint for one JSON Schema (``anyOf [X, null]`` → ``X | None``; enums → ``Literal``)."""
    schema = _deref(schema, root)
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != "null"]
        nullable = len(options) < len(schema["anyOf"])
        inner: Any = python_type(options[0], root) if len(options) == 1 else Any
        return inner | None if nullable and inner is not Any else inner
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return list[python_type(items, root)] if isinstance(items, dict) else list  # type: ignore[misc]
    if kind == "object":
        values = schema.get("additionalProperties")
        return dict[str, python_type(values, root)] if isinstance(values, dict) else dict  # type: ignore[misc]
    return _SCALARS.get(str(kind), Any)


def plain_schema(schema: dict[str, Any], root: dict[str, Any] | None = None) -> dict[str, Any]:
    """The part of a property's JSON Schema a Python type hint carries (what the trl tool schema holds)."""
    root = schema if root is None else root
    schema = _deref(schema, root)
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != "null"]
        out = plain_schema(options[0], root) if len(options) == 1 else {}
        if len(options) < len(schema["anyOf"]):
            out["nullable"] = True
        return out
    if "enum" in schema:
        choices = list(schema["enum"])
        return {"type": "string" if all(isinstance(v, str) for v in choices) else schema.get("type"), "enum": choices}
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return {"type": "array", "items": plain_schema(items, root)} if isinstance(items, dict) else {"type": "array"}
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, dict):
            return {"type": "object", "additionalProperties": plain_schema(values, root)}
        return {"type": "object"}
    return {"type": kind} if kind in _SCALARS else {}


def signature_of(schema: dict[str, Any]) -> inspect.Signature:
    """``(self, *, required..., optional=default...)`` typed from an input schema."""
    required = set(schema.get("required", []))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    properties: dict[str, Any] = schema.get("properties", {})
    ordered = [n for n in properties if n in required] + [n for n in properties if n not in required]
    for name in ordered:
        hint = python_type(properties[name], schema)
        default = inspect.Parameter.empty if name in required else properties[name].get("default")
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
    return inspect.Signature(params, return_annotation=str)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def docstring_of(spec: ToolSpec) -> str:
    """The tool's description, then ``Args:`` with each argument's description (Google style)."""
    return docstring_from(spec.description, spec.input_schema())


def docstring_from(description: str, schema: dict[str, Any]) -> str:
    """A description and an input schema as a Google-style docstring (what ``get_json_schema`` reads)."""
    properties: dict[str, Any] = schema.get("properties", {})
    lines = [description.strip()]
    if properties:
        lines += ["", "Args:"]
        for name, prop in properties.items():
            text = _one_line(str(prop.get("description") or prop.get("title") or name))
            lines.append(f"    {name}: {text}")
    return "\n".join(lines)


def tool_method(service: str, spec: ToolSpec) -> Callable[..., str]:
    """The method ``<service>__<tool>`` of an environment: it hands its keyword arguments to the environment's
    ``_call_tool(service, tool, arguments)`` and returns the text the agent reads."""

    def call(self: Any, arguments: dict[str, Any]) -> str:
        return str(self._call_tool(service, spec.name, arguments))

    return schema_method(qualified_name(service, spec.name), spec.description, spec.input_schema(), call)


def schema_method(
    name: str, description: str, schema: dict[str, Any], call: Callable[[Any, dict[str, Any]], str]
) -> Callable[..., str]:
    """A method named ``name`` whose signature and docstring say ``schema`` and ``description``; it hands its
    keyword arguments to ``call(self, arguments)``."""
    signature = signature_of(schema)

    def method(self: Any, **arguments: Any) -> str:
        return call(self, arguments)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = docstring_from(description, schema)
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__annotations__ = {
        p.name: p.annotation for p in signature.parameters.values() if p.annotation is not inspect.Parameter.empty
    } | {"return": str}
    return method
