"""The dispatcher every tool call goes through, whichever door it came by.

``call_now`` validates the arguments, runs the tool inside a transaction, and writes the audit row in that same
transaction, for every outcome. :class:`~coworkenv.servers.kit.state.ServiceState` is a ``Dispatcher``.

A dispatcher may carry a fault switch (``faults``, :mod:`coworkenv.servers.kit.tool_faults`): then some of the
agent's calls are answered 429 or 500 without running (audited as injected) or wait before running.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import UTC, datetime
from types import EllipsisType
from typing import Any

import anyio
from pydantic import BaseModel, ValidationError

from coworkenv.servers.kit import audit
from coworkenv.servers.kit.audit import MAX_MESSAGE, Outcome, argument_problem, clip, safe_value, same_json
from coworkenv.servers.kit.clock import SimClock
from coworkenv.servers.kit.context import ToolContext, ToolResult
from coworkenv.servers.kit.errors import ServiceError
from coworkenv.servers.kit.service import Service
from coworkenv.servers.kit.store import TableStore
from coworkenv.servers.kit.tool import ToolSpec
from coworkenv.servers.kit.tool_faults import INJECTED, Fault, FaultSwitch

log = logging.getLogger("coworkenv.servers")


def _format_validation(tool: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        parts.append(f"{loc}: {err['msg']}")
    return f"Invalid arguments for {tool}: " + "; ".join(parts) + ". Check the tool's input schema and call again."


class Dispatcher(ABC):
    """Tool calls onto one service's database: the part of :class:`ServiceState` that runs them. It is the
    :class:`~coworkenv.servers.kit.context.ToolState` its tools' contexts run on, with the tables and ids of the
    state it is part of."""

    service: Service
    conn: sqlite3.Connection
    clock: SimClock
    tables: dict[str, TableStore]
    _nested: bool = False
    """Whether the call running now is a savepoint inside a mark's transaction (see :data:`_BEGIN`)."""
    journal: list[audit.Written]
    """The writes of the call running now, noted by the table stores (its audit row's ``changes``)."""
    faults: FaultSwitch | None = None
    """Injected tool faults (:mod:`.tool_faults`) on the agent's calls; None: none."""

    @abstractmethod
    def new_id(self, table: str) -> str:
        """A fresh id for a new record of ``table`` (minted by the state: :meth:`ServiceState.new_id`)."""

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, actor: str = "agent", member: str | None = None
    ) -> ToolResult:
        """Run one tool call and audit it, whatever its outcome. Never raises for a bad call. A slow fault
        (:attr:`faults`) waits here, before the call runs."""
        fault = self._draw(name, actor, member)
        if fault is not None and fault.delay_s > 0:
            await anyio.sleep(fault.delay_s)
        return self.call_now(name, arguments, actor, member, fault=fault)

    def _draw(self, name: str, actor: str, member: str | None) -> Fault | None:
        """The fault of this call, if the switch is on and it is the agent's own call of a tool of the service."""
        if self.faults is None or actor != "agent" or member is not None or not isinstance(name, str):
            return None
        return self.faults.draw() if name in self.service.tools_by_name else None

    def call_now(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        actor: str = "agent",
        member: str | None = None,
        *,
        fault: Fault | EllipsisType | None = ...,
    ) -> ToolResult:
        """The same call, for synchronous callers (a slow fault does not wait here). Tool bodies never suspend, so
        a call is atomic.

        ``member`` (privileged, Python API only) runs the call as another workspace member of a service that has
        members (docs, chat); the audit row's actor then reads ``actor:member``.

        Arguments no tool could take (text that is not valid Unicode, nesting past :data:`MAX_DEPTH`) are an
        ``invalid_arguments`` answer like any other bad input: audited, with a safe copy of what was sent.

        ``fault``: the injected fault drawn for this call already (:meth:`call`); left out, it is drawn here."""
        if fault is ...:
            fault = self._draw(name, actor, member)
        started = time.perf_counter()
        raw: Any = {} if arguments is None else arguments
        problem = argument_problem(raw)
        if argument_problem(name) is not None:
            problem = "the tool name is not valid Unicode text"
        if problem is not None:
            name, raw = safe_value(name), safe_value(raw)
        spec = None if problem is not None else self.service.tools_by_name.get(name)
        data: dict[str, Any] | None = None
        changed = False
        typed: Any = raw  # nothing validated (unknown tool, invalid arguments): the audit keeps the raw ones
        conn = self.conn
        journal = self.journal
        journal.clear()
        # inside a mark (:meth:`ServiceState.mark`, an open transaction) the call is a savepoint of its own in it
        nested = self._nested = conn.in_transaction
        conn.execute(_BEGIN[nested])
        injected: dict[str, Any] | None = None
        try:
            if fault is not None and fault.answers:  # an injected 429/500: nothing runs, the row says so
                outcome: Outcome = "error"
                text, injected = fault.text, {INJECTED: fault.kind}
            elif problem is not None:
                outcome = "invalid_arguments"
                text = (
                    f"Invalid arguments for {clip(name, 100)}: {problem}. Check the tool's input schema and call again."
                )
            elif spec is None:
                outcome = "unknown_tool"
                text = (
                    f"Unknown tool {clip(name, 100)!r} in the {self.service.name} service. "
                    f"Available tools: {', '.join(self.service.tools_by_name)}."
                )
            elif not isinstance(raw, Mapping):
                outcome, text = "invalid_arguments", f"Invalid arguments for {name}: expected an object."
            else:
                outcome, data, text, changed, validated = self._run(spec, raw, actor, member)
                typed = raw if validated is None else validated
            if outcome != "ok":
                text = clip(text, MAX_MESSAGE)
            plain = _plain(raw)
            raw_json = audit.to_json(plain)
            if (outcome in audit.UNTAKEN or injected) and len(raw_json) > audit.MAX_RECORDED_ARGUMENTS:
                plain = raw = typed = audit.capped(raw_json)
                raw_json = audit.to_json(plain)
            same = typed is raw or same_json(typed, plain)  # mostly: then encoded once
            seq = audit.write_row(
                conn,
                sim_time=self.clock.iso(),
                wall_time=datetime.now(UTC).isoformat(timespec="microseconds"),
                actor=actor if member is None else f"{actor}:{clip(safe_value(member), 200)}",
                tool=name,
                arguments=None,
                arguments_json=raw_json if same else audit.to_json(_plain(typed)),
                raw_arguments=None,
                raw_json=raw_json,
                outcome=outcome,
                result=data if injected is None else injected,
                result_json=text if outcome == "ok" else None,
                error=None if outcome == "ok" else text,
                duration_ms=(time.perf_counter() - started) * 1000,
                state_changed=changed,
                changes_json=audit.changes_text(journal) if journal else None,
            )
            journal.clear()
            conn.execute(_COMMIT[nested])
        except BaseException:
            for sql in _ROLLBACK[nested]:
                conn.execute(sql)
            raise
        return ToolResult(name, outcome, data, text, seq)

    def _undo(self) -> None:
        """Drop what a failed tool body wrote; the call's audit row then goes in a fresh transaction (or, inside
        a mark, in the call's savepoint, now emptied)."""
        self.journal.clear()
        if self._nested:
            self.conn.execute("ROLLBACK TO _call")
            return
        self.conn.execute("ROLLBACK")
        self.conn.execute("BEGIN")

    def _run(
        self, spec: ToolSpec, raw: Mapping[str, Any], actor: str, member: str | None = None
    ) -> tuple[Outcome, dict[str, Any] | None, str, bool, dict[str, Any] | None]:
        """Validate and run one call: (outcome, data, text, state changed, the validated arguments or None)."""
        try:
            args = spec.args_model.model_validate(raw)
        except ValidationError as exc:
            return "invalid_arguments", None, _format_validation(spec.name, exc), False, None
        except Exception as exc:  # a validator that raised something else: still the caller's bad input
            log.warning("argument validation of %s raised %r", spec.name, exc)
            return (
                "invalid_arguments",
                None,
                f"Invalid arguments for {spec.name}: {exc}. Check the input schema.",
                False,
                None,
            )
        typed = _typed_arguments(args)
        return (*self._execute(spec, args, actor, member), typed)

    def _execute(
        self, spec: ToolSpec, args: BaseModel, actor: str, member: str | None = None
    ) -> tuple[Outcome, dict[str, Any] | None, str, bool]:
        conn = self.conn
        before = conn.total_changes
        try:
            ctx = ToolContext(self, actor, member)
            model = spec.fn(ctx, **{k: getattr(args, k) for k in type(args).model_fields})
            data = model.model_dump(mode="json")
            return "ok", data, audit.to_json(data), conn.total_changes != before
        except ServiceError as exc:
            self._undo()
            return "error", None, str(exc), False
        except ValidationError as exc:  # a tool tried to store a record that breaks its model
            self._undo()
            return (
                "error",
                None,
                _format_validation(spec.name, exc).replace("Invalid arguments", "Invalid values"),
                False,
            )
        except Exception:
            self._undo()
            log.exception("tool %s of %s crashed", spec.name, self.service.name)
            return "internal_error", None, f"Internal error in {spec.name}; nothing was changed. Try again.", False


_BEGIN = ("BEGIN", "SAVEPOINT _call")
_COMMIT = ("COMMIT", "RELEASE _call")
_ROLLBACK = (("ROLLBACK",), ("ROLLBACK TO _call", "RELEASE _call"))
"""How a call opens, commits and abandons its transaction: on its own (index 0), or as a savepoint inside the
transaction of a mark (index 1; releasing it keeps its writes and audit row together in the mark's)."""


def _plain(value: Any) -> Any:
    """A mapping as a dict (what JSON encodes); anything else as it is."""
    return value if type(value) is dict or not isinstance(value, Mapping) else dict(value)


def _typed_arguments(args: BaseModel) -> dict[str, Any] | None:
    """The arguments a tool runs with, as JSON: validated and typed by its input schema, only those the caller
    gave (an omitted argument stays absent, so a matcher ``{"exists": false}`` on it still holds)."""
    try:
        return args.model_dump(mode="json", exclude_unset=True)
    except Exception:  # a value pydantic cannot write as JSON: keep the raw arguments rather than fail the call
        log.warning("arguments of %s cannot be written as JSON", type(args).__name__, exc_info=True)
        return None
