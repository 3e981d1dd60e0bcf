"""Tools: plain async functions with typed arguments, wrapped once by the kit.

``@tool(...)`` reads the function's signature (after the leading ``ctx``) into a pydantic arguments
model and its return annotation into the output model. The dispatcher (:mod:`.state`) validates,
runs, audits; the MCP door (:mod:`.server`) and the direct in-process door both go through it.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, create_model

ToolFn = Callable[..., BaseModel]
T = TypeVar("T")

MAX_ID = 200
"""The longest id, reference or page token a tool takes (``*_id`` arguments and the like)."""
MAX_SHORT_TEXT = 1_000
"""The longest name, subject, title, query, address or time a tool takes."""
MAX_LONG_TEXT = 100_000
"""The longest body, content, description or note a tool takes."""
MAX_ITEMS = 200
"""The most items in a list argument, and entries in an object argument (metadata)."""

_ID_NAMES = frozenset(
    {"page_token", "charge", "customer", "vendor", "channel", "user", "from_user", "owner", "to", "bank_account"}
)
_LONG_NAMES = frozenset(
    {"body", "content", "text", "description", "note", "reason", "comment", "message", "quoted_text", "find"}
    | {"next_step", "loss_reason", "review_note"}
)


def text_limit(name: str) -> int:
    """The default longest text for an argument, from its name: ids are short, bodies long."""
    if name.endswith(("_id", "_ids")) or name in _ID_NAMES:
        return MAX_ID
    if name in _LONG_NAMES or name.endswith(("_text", "_description", "_body")):
        return MAX_LONG_TEXT
    return MAX_SHORT_TEXT


def bounded(annotation: Any, limit: int) -> Any:
    """``annotation`` with a maximum length on every text, list and object in it that has none of its own (an
    explicit ``Field(max_length=...)`` still wins), so the bounds show in the input schema the agent reads and
    oversized input is an invalid-arguments answer."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(annotation)
        return typing.Annotated[(bounded(base, limit), *meta)]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(bounded(a, limit) for a in typing.get_args(annotation))]  # noqa: UP007
    if annotation is str:
        return typing.Annotated[str, Field(max_length=limit)]
    if origin is list:
        (item,) = typing.get_args(annotation) or (Any,)
        return typing.Annotated[list[bounded(item, limit)], Field(max_length=MAX_ITEMS)]  # type: ignore[misc]
    if origin is dict:
        key, value = typing.get_args(annotation) or (Any, Any)
        entries: Any = dict[bounded(key, MAX_ID), bounded(value, MAX_SHORT_TEXT)]  # type: ignore[misc]
        return typing.Annotated[entries, Field(max_length=MAX_ITEMS)]
    return annotation


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    fn: ToolFn
    args_model: type[BaseModel]
    output_model: type[BaseModel]
    annotations: ToolAnnotations

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.read_only_hint)

    def input_schema(self) -> dict[str, Any]:
        return self.args_model.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        return self.output_model.model_json_schema()


def tool(
    *,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    title: str | None = None,
    name: str | None = None,
) -> Callable[[ToolFn], ToolSpec]:
    """Turn ``def fn(ctx, arg: Annotated[T, Field(description=...)], ...) -> Model`` into a ToolSpec.

    The docstring is the description the model reads: say what the tool does and when to use it.
    """

    def wrap(fn: ToolFn) -> ToolSpec:
        if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
            raise TypeError(
                f"tool {fn.__name__} must be a plain function: its body runs inside the dispatcher's transaction"
            )
        hints = typing.get_type_hints(fn, include_extras=True)
        params = list(inspect.signature(fn).parameters.values())
        if not params or params[0].name != "ctx":
            raise TypeError(f"tool {fn.__name__}: the first parameter must be 'ctx'")
        fields: dict[str, Any] = {}
        for p in params[1:]:
            if p.name not in hints:
                raise TypeError(f"tool {fn.__name__}: argument {p.name!r} needs a type")
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (bounded(hints[p.name], text_limit(p.name)), default)
        tool_name = name or fn.__name__
        model_name = "".join(part.title() for part in tool_name.split("_")) + "Arguments"
        args_model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
        output = hints.get("return")
        if not (isinstance(output, type) and issubclass(output, BaseModel)):
            raise TypeError(f"tool {fn.__name__} must declare a pydantic model as its return type")
        doc = inspect.cleandoc(fn.__doc__ or "")
        if not doc:
            raise TypeError(f"tool {fn.__name__} needs a docstring: it is the description the agent reads")
        annotations = ToolAnnotations(
            title=title or tool_name.replace("_", " ").capitalize(),
            read_only_hint=read_only,
            destructive_hint=destructive if not read_only else False,
            idempotent_hint=idempotent or read_only,
            open_world_hint=False,
        )
        return ToolSpec(tool_name, doc, fn, args_model, output, annotations)

    return wrap


class Page(BaseModel, Generic[T]):
    """One page of a list: the items, the total that matched, and the token for the next page."""

    items: list[T]
    total: int = Field(description="How many records matched in all pages.")
    next_page_token: str | None = Field(
        default=None, description="Pass as page_token to get the next page; null on the last page."
    )


PageSize = typing.Annotated[int, Field(ge=1, le=100, description="How many records per page (1-100). Example: 20")]
PageToken = typing.Annotated[
    str | None, Field(description="The next_page_token of a previous call, to continue a list. Example: '20'")
]
