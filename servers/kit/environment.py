"""An environment: the services of one task, each with its own database, sharing one simulated clock.

This is the privileged Python API (none of it is a tool): create from seeds and a clock, call tools
directly, dump state, hash it, read the audit log, reset.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from coworkenv.servers.kit.audit import AuditRow
from coworkenv.servers.kit.clock import SimClock
from coworkenv.servers.kit.errors import EnvironmentConfigError
from coworkenv.servers.kit.records import Seed
from coworkenv.servers.kit.server import ServiceServer
from coworkenv.servers.kit.service import Service
from coworkenv.servers.kit.state import Mark, ServiceState, ToolResult, canonical_json
from coworkenv.servers.kit.store import Row

ServiceLookup = Mapping[str, Service]


_DEFAULT_SERVICES: ServiceLookup | None = None


def use_services(services: ServiceLookup) -> None:
    """Set the services ``Environment.create`` builds from when it is given no ``registry``.

    The kit knows no service: ``coworkenv.servers.registry`` hands it the shipped ones when it is imported (and
    importing anything under ``coworkenv.servers`` imports it)."""
    global _DEFAULT_SERVICES
    _DEFAULT_SERVICES = services


def audit_order(row: AuditRow) -> tuple[str, str, int]:
    """Where an audit row goes among all services' rows: the order the calls happened."""
    return (row.wall_time, row.service, row.seq)


@dataclass(frozen=True)
class EnvironmentMark:
    """Marks of every service of an environment and its clock (:meth:`Environment.mark`)."""

    services: Mapping[str, Mark]
    now: str


def default_services() -> ServiceLookup | None:
    """The services ``Environment.create`` builds from when it is given no ``registry`` (see :func:`use_services`)."""
    return _DEFAULT_SERVICES


class Environment:
    """The services of one environment. Use :meth:`create`; close it (or use ``with``) when done."""

    def __init__(self, states: Mapping[str, ServiceState], clock: SimClock) -> None:
        self.states = dict(states)
        self.clock = clock

    @classmethod
    def create(
        cls,
        seeds: Mapping[str, Mapping[str, Any] | None] | Iterable[str],
        now: str | datetime | None = None,
        db_dir: str | Path | None = None,
        registry: ServiceLookup | None = None,
        parsed: Mapping[str, Seed] | None = None,
    ) -> Environment:
        """Create fresh services. ``seeds`` maps service name to its seed (or lists service names).

        ``db_dir`` puts each service in ``DIR/<service>.db`` (new files only; the folder is created when
        missing); otherwise in memory. ``parsed``: per service, what ``parse_seed`` returned for its seed, where
        the caller validated it already (in memory only: spares validating it again).
        """
        parsed = parsed or {}
        if registry is None:
            if _DEFAULT_SERVICES is None:
                raise EnvironmentConfigError("no services to create from: pass registry=, or import coworkenv.servers")
            registry = _DEFAULT_SERVICES
        plan = dict(seeds) if isinstance(seeds, Mapping) else {name: None for name in seeds}
        unknown = [n for n in plan if n not in registry]
        if unknown:
            raise EnvironmentConfigError(
                f"unknown service(s) {', '.join(unknown)}; available: {', '.join(sorted(registry))}"
            )
        clock = SimClock(now) if now is not None else SimClock()
        if db_dir is not None:
            try:
                Path(db_dir).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise EnvironmentConfigError(
                    f"cannot create the folder {db_dir}: {exc.strerror or exc}; pass a writable folder"
                ) from exc
        states: dict[str, ServiceState] = {}
        try:
            for name, seed in plan.items():
                path = None
                if db_dir is not None:
                    path = Path(db_dir) / f"{name}.db"
                    if path.exists():
                        raise EnvironmentConfigError(f"{path} already exists; use a fresh directory")
                given = parsed.get(name) if path is None else None
                states[name] = ServiceState.open(registry[name], seed, clock.now(), path, parsed=given)
                states[name].clock = clock
        except BaseException:
            for s in states.values():
                s.close()
            raise
        return cls(states, clock)

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for s in self.states.values():
            s.close()

    def fork(self) -> Environment:
        """A copy of this environment in memory, as it stands now: its own databases, clock and audit log.
        Seed one pristine environment per task, then fork it for each episode."""
        clock = SimClock(self.clock.now())
        states = {name: s.fork() for name, s in self.states.items()}
        for s in states.values():
            s.clock = clock
        return Environment(states, clock)

    def mark(self) -> EnvironmentMark:
        """Mark every service's state and the clock, to come back with :meth:`rollback` (see
        :meth:`ServiceState.mark`: a run played after a mark and rolled back leaves no trace, and costs no fork)."""
        marks = {name: s.mark() for name, s in self.states.items()}
        return EnvironmentMark(marks, self.clock.iso())

    def rollback(self, mark: EnvironmentMark) -> None:
        """Every service back to ``mark``, the clock too; the mark stays open."""
        for name, s in self.states.items():
            s.rollback(mark.services[name])
        self.clock.set(mark.now)

    def release(self, mark: EnvironmentMark) -> None:
        """Keep what was done since ``mark`` and close it."""
        for name, s in self.states.items():
            s.release(mark.services[name])

    def dump_since(
        self, mark: EnvironmentMark, base: Mapping[str, Mapping[str, list[Row]]]
    ) -> dict[str, dict[str, list[Row]]]:
        """A dump that reuses ``base``'s lists (``base``: a dump at ``mark``) for the tables nothing wrote to since
        the mark (see ``ServiceState.dump_since``)."""
        return {name: s.dump_since(mark.services[name], base.get(name, {})) for name, s in self.states.items()}

    def audit_since(self, mark: EnvironmentMark) -> list[AuditRow]:
        """The audit rows written since ``mark``, of all services in the order the calls happened."""
        rows = [r for name, s in self.states.items() for r in s.audit(mark.services[name].seq)]
        return sorted(rows, key=audit_order)

    def state(self, service: str) -> ServiceState:
        try:
            return self.states[service]
        except KeyError:
            raise EnvironmentConfigError(
                f"service {service!r} is not in this environment; it has: {', '.join(self.states)}"
            ) from None

    def server(self, service: str, actor: str = "agent") -> ServiceServer:
        """An MCP server onto one service of this environment (for ``mcp.Client(server)``)."""
        return ServiceServer(self.state(service), actor)

    async def call(
        self, service: str, tool: str, arguments: Mapping[str, Any] | None = None, actor: str = "agent"
    ) -> ToolResult:
        """The direct in-process door: same validation, errors and audit as MCP, without the protocol."""
        return await self.state(service).call(tool, arguments, actor)

    def dump(self) -> dict[str, dict[str, list[Row]]]:
        return {name: s.dump() for name, s in self.states.items()}

    def dump_over(self, base: Mapping[str, Mapping[str, list[Row]]]) -> dict[str, dict[str, list[Row]]]:
        """A dump that reuses ``base``'s lists for the tables nothing wrote to (see ``ServiceState.dump_over``):
        for an environment forked from one whose dump is ``base``."""
        return {name: s.dump_over(base.get(name, {})) for name, s in self.states.items()}

    def dump_json(self) -> str:
        return canonical_json(self.dump())

    def state_hash(self) -> str:
        return hashlib.sha256(self.dump_json().encode()).hexdigest()

    def audit(self, service: str | None = None) -> list[AuditRow]:
        """Audit rows of one service, or of all services in the order the calls happened (wall-clock time)."""
        if service is not None:
            return self.state(service).audit()
        rows = [r for s in self.states.values() for r in s.audit()]
        return sorted(rows, key=audit_order)

    def reset(self) -> None:
        for s in self.states.values():
            s.reset()
        first = next(iter(self.states.values()), None)
        if first is not None:
            self.clock.set(first.initial_now)
