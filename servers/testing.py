"""The checks every service gets, for a service author's own tests: the shipped services pass them, and a service of
another package is checked the same way in two lines::

    from coworkenv.servers.testing import check_service
    from my_package.notes import EXAMPLE_SEED, SERVICE


    def test_notes_passes_the_checks_every_service_gets() -> None:
        check_service(SERVICE, EXAMPLE_SEED)

Each check is a plain function that raises ``AssertionError`` naming the tool, the call and what was wrong (no pytest
fixture, no hypothesis: the random calls are drawn from ``random.Random(rng)``, so a failure repeats). The kinds,
in the order :func:`check_service` runs them (:data:`CHECKS`):

- ``described``: every tool and every argument says what it is (the docstring and ``Field(description=...)`` are
  what the agent reads).
- ``bounds``: every text, integer, list and object argument has a limit in the input schema the agent sees
  (``max_length``, ``ge``/``le``, ``max_items``), so a bad value is an invalid-arguments answer, never a crash.
- ``seeds``: the example loads; so does any subset of its tables, each whole, empty or absent (or the refusal is a
  ``SeedError`` naming the record and the field).
- ``outcomes``: the audit outcomes: a read with no arguments answers ``ok``, an unknown tool ``unknown_tool``, an
  argument no tool takes ``invalid_arguments``, an id that is not there ``error`` (a business error that tells the
  agent what to do), each with exactly one audit row, and nothing that failed changed state.
- ``doors``: the in-memory MCP client lists exactly the service's tools, with their read-only marks, and the reads
  answer through MCP as through the direct door.
- ``fuzz``: random, often hostile, arguments at every tool, in batches on the example: no crash
  (``internal_error``), one audit row a call, no change of state without an ``ok`` row saying so, a sound database.
- ``stdio``: ``python -m coworkenv.servers serve NAME`` in a subprocess (so the service must be registered where a
  fresh interpreter finds it: shipped, or an installed package's ``coworkenv.services`` entry point) answers the
  MCP client over stdio and writes its audit rows to the database file.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from coworkenv.servers.kit import Environment, SeedError, Service, ServiceState
from coworkenv.servers.kit.audit import to_json
from coworkenv.servers.kit.door import DirectDoor, open_mcp_door
from coworkenv.servers.testing_calls import TRICKY, enum_values, filler, random_call

NOW = "2026-03-05T09:00:00Z"
Seed = Mapping[str, Sequence[Mapping[str, Any]]]
SeedSource = Seed | str | Path
__all__ = [
    "CHECKS",
    "NOW",
    "TRICKY",
    "Seed",
    "SeedSource",
    "check_bounds",
    "check_described",
    "check_doors",
    "check_fuzz",
    "check_outcomes",
    "check_seeds",
    "check_service",
    "check_stdio",
    "enum_values",
    "load_example",
]
CHECKS = ("described", "bounds", "seeds", "outcomes", "doors", "fuzz", "stdio")
"""The kinds of check :func:`check_service` runs, in order."""


def load_example(seed: SeedSource) -> dict[str, list[dict[str, Any]]]:
    """A seed given as a document, or as the path of its JSON file."""
    if isinstance(seed, str | Path):
        loaded: dict[str, list[dict[str, Any]]] = json.loads(Path(seed).read_text(encoding="utf-8"))
        return loaded
    return json.loads(json.dumps(seed))


def check_service(
    service: Service,
    seed: SeedSource,
    *,
    now: str = NOW,
    calls: int = 200,
    rng: int = 0,
    stdio: bool = True,
    skip: Iterable[str] = (),
) -> None:
    """Every check of :data:`CHECKS` on ``service`` and its example workspace ``seed`` (a ``{table: [records]}``
    document or its JSON file). ``calls``: how many random calls the fuzz check makes; ``stdio=False`` (or
    ``skip=("stdio",)``) leaves out the subprocess, for a service not registered where a fresh interpreter looks."""
    example = load_example(seed)
    left_out = {*skip, *(() if stdio else ("stdio",))}
    unknown = left_out - set(CHECKS)
    if unknown:
        raise ValueError(f"no check kind {', '.join(sorted(unknown))}; the kinds are {', '.join(CHECKS)}")
    runs: dict[str, Callable[[], None]] = {
        "described": lambda: check_described(service),
        "bounds": lambda: check_bounds(service),
        "seeds": lambda: check_seeds(service, example, now=now, rng=rng),
        "outcomes": lambda: check_outcomes(service, example, now=now),
        "doors": lambda: check_doors(service, example, now=now),
        "fuzz": lambda: check_fuzz(service, example, now=now, calls=calls, rng=rng),
        "stdio": lambda: check_stdio(service, example, now=now),
    }
    for kind in CHECKS:
        if kind not in left_out:
            runs[kind]()


def _env(service: Service, seed: Seed, now: str) -> Environment:
    return Environment.create({service.name: seed}, now=now, registry={service.name: service})


# ---------------------------------------------------------------------------------------------- the schema
def check_described(service: Service) -> None:
    """Every tool has a description, and so does each of its arguments."""
    missing = [f"tool {spec.name}" for spec in service.tools if not spec.description.strip()]
    for spec in service.tools:
        props = spec.input_schema().get("properties", {})
        missing += [f"{spec.name}({name})" for name, prop in props.items() if not _described(prop)]
    assert not missing, f"{service.name}: say what these are (a docstring, Field(description=...)): {missing}"


def _described(prop: Mapping[str, Any]) -> bool:
    return bool(str(prop.get("description", "")).strip())


def check_bounds(service: Service) -> None:
    """Every text has a ``maxLength`` (or an enum), every integer a minimum and a maximum, every list a
    ``maxItems``, every free object a ``maxProperties``, in every tool's input schema."""
    missing: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            kind = node.get("type")
            if kind == "string" and not {"maxLength", "enum", "const"} & node.keys():
                missing.append(f"{where}: no maxLength")
            if kind == "integer" and not {"maximum", "exclusiveMaximum"} & node.keys():
                missing.append(f"{where}: no maximum")
            if kind == "integer" and not {"minimum", "exclusiveMinimum"} & node.keys():
                missing.append(f"{where}: no minimum")
            if kind == "array" and "maxItems" not in node:
                missing.append(f"{where}: no maxItems")
            if kind == "object" and isinstance(node.get("additionalProperties"), dict) and "maxProperties" not in node:
                missing.append(f"{where}: no maxProperties")
            for key, sub in node.items():
                walk(sub, f"{where}.{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{where}[{i}]")

    for spec in service.tools:
        walk(spec.input_schema(), f"{service.name}.{spec.name}")
    assert not missing, f"unbounded arguments (add max_length, ge/le, a PageSize...): {missing}"


# ---------------------------------------------------------------------------------------------- seeds
def check_seeds(service: Service, seed: SeedSource, *, now: str = NOW, rounds: int = 30, rng: int = 0) -> None:
    """The example loads, every table whole; so do no tables, every table empty, and ``rounds`` random subsets
    (each table whole, empty or absent) — or the service refuses one with a ``SeedError`` that names a record of
    it and a field, on one line."""
    example = load_example(seed)
    _loads(service, example, now, refusal_ok=False)
    _loads(service, {}, now)
    _loads(service, {t.name: [] for t in service.tables}, now)
    draw = random.Random(rng)
    for _ in range(rounds):
        subset: dict[str, list[dict[str, Any]]] = {}
        for table in service.tables:
            how = draw.choice(["absent", "empty", "whole"] if example.get(table.name) else ["absent", "empty"])
            if how != "absent":
                subset[table.name] = [] if how == "empty" else json.loads(json.dumps(example[table.name]))
        _loads(service, subset, now)


def _loads(service: Service, seed: Seed, now: str, refusal_ok: bool = True) -> None:
    try:
        env = _env(service, seed, now)
    except SeedError as exc:
        message = str(exc)
        assert refusal_ok, f"{service.name}: the example workspace does not load: {message}"
        assert "\n" not in message and message.startswith(f"{service.name}."), (
            f"{service.name}: a refused seed must name the record and the field on one line, got: {message}"
        )
        return
    with env:
        state = env.state(service.name)
        dumped = state.dump()
        for table in service.tables:
            given = sorted(str(r["id"]) for r in seed.get(table.name, []))
            assert sorted(str(r["id"]) for r in dumped[table.name]) == given, (
                f"{service.name}.{table.name}: the seeded ids are not the ones given"
            )
        for spec in _plain_reads(service):
            outcome = state.call_now(spec.name, {}).outcome
            assert outcome != "internal_error", f"{service.name}.{spec.name}() crashed on the seed {sorted(seed)}"


def _plain_reads(service: Service) -> list[Any]:
    return [s for s in service.tools if s.read_only and not s.input_schema().get("required")]


# ---------------------------------------------------------------------------------------------- outcomes
def check_outcomes(service: Service, seed: SeedSource, *, now: str = NOW) -> None:
    """One call of each audit outcome an agent meets, each one audit row with that outcome, and no failed call
    changing state: reads with no arguments (``ok``), an unknown tool, an argument no tool takes, and each tool's
    first ``*_id`` argument set to an id no record has (``error``, or ``invalid_arguments`` when the id's form is
    checked; never a crash)."""
    example = load_example(seed)
    with _env(service, example, now) as env:
        state = env.state(service.name)

        def call(tool: str, args: dict[str, Any], want: set[str]) -> None:
            before, rows = state.state_hash(), len(state.audit())
            result = state.call_now(tool, args)
            audit = state.audit()
            assert len(audit) == rows + 1, f"{service.name}.{tool}({args}) left {len(audit) - rows} audit rows, not 1"
            assert (audit[-1].tool, audit[-1].outcome) == (tool, result.outcome)
            assert result.outcome in want, f"{service.name}.{tool}({args}): {result.outcome}: {result.text}"
            if result.outcome != "ok":
                assert state.state_hash() == before, f"{service.name}.{tool}({args}) failed and changed state"
                assert result.text.strip(), f"{service.name}.{tool}({args}) failed without saying why"

        for spec in _plain_reads(service):
            call(spec.name, {}, {"ok"})
        call("no_such_tool", {}, {"unknown_tool"})
        first = service.tools[0]
        call(first.name, {"no_such_argument": 1}, {"invalid_arguments"})
        for spec in service.tools:
            schema = spec.input_schema()
            ids = [a for a in schema.get("required", []) if a.endswith("_id")]
            if ids:
                args = {a: filler(schema["properties"][a], schema) for a in schema.get("required", [])}
                args[ids[0]] = "zz_missing_0"
                call(spec.name, args, {"error", "invalid_arguments"})


# ---------------------------------------------------------------------------------------------- doors
def check_doors(service: Service, seed: SeedSource, *, now: str = NOW) -> None:
    """The in-memory MCP client lists the service's tools (names, read-only marks) and its reads answer through
    MCP exactly as through the direct door."""
    example = load_example(seed)
    reads = [s.name for s in _plain_reads(service)]

    async def main() -> None:
        with anyio.fail_after(30), _env(service, example, now) as direct_env, _env(service, example, now) as env:
            direct = [await DirectDoor(direct_env).call(service.name, tool, {}) for tool in reads]
            async with open_mcp_door({service.name: env.server(service.name)}) as door:
                listing = await door.clients[service.name].list_tools()
                marks = {t.name: bool(t.annotations and t.annotations.read_only_hint) for t in listing.tools}
                assert marks == {s.name: s.read_only for s in service.tools}, (
                    f"{service.name}: MCP lists {marks}, the service has {[s.name for s in service.tools]}"
                )
                over_mcp = [await door.call(service.name, tool, {}) for tool in reads]
            for tool, a, b in zip(reads, direct, over_mcp, strict=True):
                assert (a.outcome, a.data) == (b.outcome, b.data), f"{service.name}.{tool}: the doors disagree"

    anyio.run(main)


# ---------------------------------------------------------------------------------------------- fuzz
def check_fuzz(service: Service, seed: SeedSource, *, now: str = NOW, calls: int = 200, rng: int = 0) -> None:
    """``calls`` random calls in batches of 1 to 8 on fresh copies of the example: each leaves one audit row that
    keeps the arguments as sent, none is an ``internal_error``, none changes state unless it succeeded (and its
    row says so), and the database passes SQLite's integrity check after every batch."""
    example = load_example(seed)
    draw = random.Random(rng)
    ids = sorted({str(v) for rows in example.values() for r in rows for k, v in r.items() if k.endswith("id") and v})
    made = 0
    while made < calls:
        batch = [random_call(service, draw, ids) for _ in range(min(draw.randint(1, 8), calls - made))]
        made += len(batch)
        with _env(service, example, now) as env:
            state = env.state(service.name)
            for tool, args in batch:
                before, rows = state.state_hash(), len(state.audit())
                result = state.call_now(tool, args)
                audit = state.audit()
                where = f"{service.name}.{tool}({args!r})"
                assert len(audit) == rows + 1, f"{where} left {len(audit) - rows} audit rows, not 1"
                row = audit[-1]
                assert (row.tool, row.outcome) == (tool, result.outcome), where
                assert to_json(row.raw_arguments) == to_json(args), f"{where}: the audit row changed the arguments"
                assert result.outcome != "internal_error", f"{where} crashed: {result.text}"
                changed = state.state_hash() != before
                assert changed == row.state_changed, f"{where}: the audit row's state_changed is wrong"
                assert not changed or result.outcome == "ok", f"{where} failed and changed state"
            integrity = state.conn.execute("PRAGMA integrity_check").fetchone()[0]
            assert integrity == "ok", f"{service.name}: the database is not sound after {batch!r}: {integrity}"


# ---------------------------------------------------------------------------------------------- stdio
def check_stdio(service: Service | str, seed: SeedSource, *, now: str = NOW, timeout: float = 60) -> None:
    """Serve the service from a fresh interpreter (``python -m coworkenv.servers serve NAME --db ... --seed ...``)
    and call it over stdio: it lists the tools the service has, answers its reads, and the calls are audit rows of
    the database file. A service only registered in this process (``register_service``) is unknown there: install
    the package that names it in the ``coworkenv.services`` entry-point group first (``pip install -e .``)."""
    from mcp import Client, StdioServerParameters

    from coworkenv.servers.registry import get_service

    spec = get_service(service) if isinstance(service, str) else service
    example = load_example(seed)
    reads = [s.name for s in _plain_reads(spec)]
    with tempfile.TemporaryDirectory(prefix="coworkenv-stdio-") as tmp:
        seed_file, db = Path(tmp) / "seed.json", Path(tmp) / f"{spec.name}.db"
        seed_file.write_text(json.dumps(example), encoding="utf-8")
        args = ["-m", "coworkenv.servers", "serve", spec.name, "--db", str(db), "--seed", str(seed_file), "--now", now]
        params = StdioServerParameters(command=sys.executable, args=args, env={**os.environ, "PYTHONUNBUFFERED": "1"})

        async def main() -> None:
            with anyio.fail_after(timeout):
                async with Client(params) as client:
                    listed = {t.name for t in (await client.list_tools()).tools}
                    assert listed == {t.name for t in spec.tools}, (
                        f"{spec.name} over stdio lists {sorted(listed)}: is the installed package the one tested?"
                    )
                    for tool in reads:
                        result = await client.call_tool(tool, {})
                        assert not result.is_error, f"{spec.name}.{tool}() over stdio: {result.content}"

        try:
            anyio.run(main)
        except Exception as exc:
            raise AssertionError(
                f"{spec.name} could not be served over stdio ({type(exc).__name__}: {exc}); is it registered where a "
                "fresh interpreter finds it (shipped, or an installed package's coworkenv.services entry point)?"
            ) from exc
        state = ServiceState.open(spec, path=db, create=False)
        try:
            assert [r.tool for r in state.audit()] == reads, f"{spec.name}: the stdio calls are not in the audit log"
        finally:
            state.close()
