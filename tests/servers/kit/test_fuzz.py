"""Random arguments at every tool of every service: no crash, no change without its audit row, a sound database."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coworkenv.servers import SERVICES, Environment, testing
from coworkenv.servers.kit.audit import to_json
from coworkenv.servers.registry import SHIPPED

EXAMPLES = Path(__file__).parents[3] / "servers/examples"
SEEDS = {name: json.loads((EXAMPLES / f"{name}.json").read_text()) for name in SHIPPED}
TRICKY = [v for v in testing.TRICKY if isinstance(v, str)]  # the toolkit's hostile texts


def _ids(seed: dict[str, list[dict[str, Any]]]) -> list[str]:
    return sorted({str(v) for rows in seed.values() for r in rows for k, v in r.items() if k.endswith("id") and v})


def calls(services: Sequence[str] | None = None) -> st.SearchStrategy[tuple[str, str, dict[str, Any]]]:
    """One tool call of the services named (all by default) with random, often tricky, arguments."""

    def for_tool(service: str, tool: str) -> st.SearchStrategy[tuple[str, str, dict[str, Any]]]:
        schema = SERVICES[service].tools_by_name[tool].input_schema()
        props = list(schema.get("properties", {}))
        scalars = st.one_of(
            st.sampled_from(_ids(SEEDS[service]) or ["x"]),
            st.sampled_from(TRICKY),
            st.sampled_from(testing.enum_values(schema) or [None]),
            st.text(max_size=20),
            st.integers(min_value=-(2**63), max_value=2**63),
            st.floats(allow_nan=True),
            st.booleans(),
            st.none(),
        )
        values = st.one_of(
            scalars, st.lists(scalars, max_size=4), st.dictionaries(st.text(max_size=5), scalars, max_size=3)
        )
        keys = st.sampled_from(props) if props else st.just("unexpected")
        args = st.dictionaries(st.one_of(keys, st.text(max_size=8)), values, max_size=len(props) + 1)
        return args.map(lambda a: (service, tool, a))

    return st.one_of([for_tool(s, t.name) for s in sorted(services or SHIPPED) for t in SERVICES[s].tools])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls(), min_size=1, max_size=8))
def test_random_calls_never_crash_never_change_state_unaudited_and_keep_the_database_sound(
    batch: list[tuple[str, str, dict[str, Any]]],
) -> None:
    run_batch(batch)


def run_batch(batch: list[tuple[str, str, dict[str, Any]]]) -> None:
    """Make the calls on the example workspace: each leaves one audit row, none crashes, none changes state
    unaudited or on failure, and every database stays sound."""
    with Environment.create({name: SEEDS[name] for name in sorted({s for s, _, _ in batch})}) as env:
        for service, tool, args in batch:
            state = env.state(service)
            before_hash, before_rows = state.state_hash(), len(state.audit())
            result = state.call_now(tool, args)
            rows = state.audit()
            assert len(rows) == before_rows + 1, "every call leaves exactly one audit row"
            row = rows[-1]
            assert (row.tool, row.outcome) == (tool, result.outcome)
            assert to_json(row.raw_arguments) == to_json(args), "the raw arguments are kept as sent"
            if row.outcome in ("invalid_arguments", "unknown_tool"):
                assert row.arguments == row.raw_arguments
            assert result.outcome != "internal_error", f"{service}.{tool}({args!r}) crashed"
            changed = state.state_hash() != before_hash
            assert changed == row.state_changed
            assert not changed or result.outcome == "ok", "a failed call changed state"
        for state in env.states.values():
            assert state.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
