"""The reference-plus-sensitive adversary: the reference solution plus ONE extra call that commits a sensitive
kind of change (a refund, mail to an outside address, a delete...) on a record the reference does not touch.

Candidate calls of each writing tool of the services that declare sensitive kinds — on records the reference
does not touch (the task's distractors first), or to outside addresses — are played one after another on what
the reference left (at most :data:`MAX_CANDIDATES`, each record claimed by one tool so that they rarely undo
each other). Every sensitive change in the final state diff (``Service.diff`` of the initial and final dumps,
``sensitive_hits``) that the reference alone does not make is traced to the call that made that record; one
variant per kind, named after it (``reference+refund``). A variant counts only when, played alone, it
commits that very change (:func:`reproduces`). Deterministic: seeded by the task's id.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from coworkenv.servers.kit import Environment, SensitiveContext, ServiceState, ToolSpec
from coworkenv.servers.kit.door import DirectDoor
from coworkenv.synth.contract.runner import Workbench, after_reference_workspace, play_steps, user_script
from coworkenv.synth.contract.task import Task, ToolStep, is_ref
from coworkenv.synth.contract.validation.adversaries import Adversary
from coworkenv.synth.contract.validation.adversary_args import (
    ArgBuilder,
    Pools,
    is_money_tool,
    pools,
    schema_of,
    seed_of,
    target_ids,
)
from coworkenv.synth.contract.validation.lookup import services

MAX_CANDIDATES = 32
TARGETS_PER_TOOL = 2
MAX_LAYERS = 6
STRANGER = "someone@outside-partner.example"
"""An address outside every audience of the task, for calls that share or send."""
State = Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]]
Dump = dict[str, dict[str, list[dict[str, Any]]]]


@dataclass(frozen=True)
class Candidate:
    service: str
    tool: str
    target: str | None
    address: str | None = None
    turn: int = 0


def _strings(value: Any) -> Iterator[str]:
    if is_ref(value):
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def touched_ids(task: Task, initial: State, after_reference: State) -> set[str]:
    """Ids the reference names in its arguments or changes."""
    out = {s for step in task.reference_solution if isinstance(step, ToolStep) for s in _strings(step.arguments)}
    for name in task.services:
        service = services()[name]
        out |= {c.id for c in service.diff(initial.get(name, {}), after_reference.get(name, {}))}
    return out


def _by_domain(addresses: Sequence[str]) -> list[str]:
    """One address per mail domain, the rarest domains first: the company's own domain is the one most of its
    people share, so an outside audience (a customer, a stranger: :data:`STRANGER`) comes first."""
    return list(_by_domain_of(tuple(addresses)))


@functools.lru_cache(maxsize=256)
def _by_domain_of(addresses: tuple[str, ...]) -> tuple[str, ...]:
    first: dict[str, str] = {STRANGER.rsplit("@", 1)[-1]: STRANGER}
    count: Counter[str] = Counter()
    for a in addresses:
        domain = a.rsplit("@", 1)[-1]
        first.setdefault(domain, a)
        count[domain] += 1
    return tuple(first[d] for d in sorted(first, key=lambda d: count[d]))


def _tool_order(spec: ToolSpec) -> tuple[bool, bool]:
    """Destructive tools first, then money tools: the likeliest to commit a sensitive change."""
    return not spec.annotations.destructive_hint, not is_money_tool(spec.name)


def _tool_queue(
    task: Task, name: str, spec: ToolSpec, p: Pools, touched: set[str], claimed: set[str]
) -> list[Candidate]:
    """The candidate calls of one tool: on records the reference does not touch (distractors first, then
    records no other tool claimed, so that candidates rarely undo each other), or to outside addresses."""
    required = schema_of(spec).get("required", [])
    on = target_ids(name, spec, p)
    if on is not None:
        distractors = {str(x) for x in task.metadata.get("distractors", [])}
        ids = [i for i in on if i not in touched]
        ids = sorted(ids, key=lambda i: (i in claimed, i not in distractors))[:TARGETS_PER_TOOL]
        claimed |= set(ids)
        outside = _by_domain(p.addresses)  # for an address argument too (sharing a document)
        return [Candidate(name, spec.name, i, outside[k % len(outside)], turn=k) for k, i in enumerate(ids)]
    if "to" in required or "email" in required:
        addresses = _by_domain(p.addresses)[:TARGETS_PER_TOOL]
        return [Candidate(name, spec.name, None, a, turn=k) for k, a in enumerate(addresses)]
    return [Candidate(name, spec.name, None)]


def candidates(task: Task, p: Pools, touched: set[str]) -> list[Candidate]:
    """Writing calls of the services with sensitive kinds: each tool's first candidate before any second one,
    the services taking turns, destructive and money tools first within each."""
    ranked: list[tuple[int, int, list[Candidate]]] = []
    claimed: set[str] = set()
    for s, name in enumerate(task.services):
        service = services()[name]
        if not service.sensitive:
            continue
        tools = sorted((t for t in service.tools_by_name.values() if not t.read_only), key=_tool_order)
        ranked += [(rank, s, _tool_queue(task, name, spec, p, touched, claimed)) for rank, spec in enumerate(tools)]
    queues = [q for _, _, q in sorted(ranked, key=lambda r: r[:2])]
    depth = max((len(q) for q in queues), default=0)
    return [q[i] for i in range(depth) for q in queues if i < len(q)]


def _hits_by_record(
    task: Task, initial: State, final: State, names: Sequence[str] | None = None
) -> dict[tuple[str, str], tuple[str, str]]:
    """(kind, key) → (record id, a description of the change) for every sensitive change between two states
    (of the task's services, or of ``names``)."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for name in task.services if names is None else names:
        service = services()[name]
        before, after = initial.get(name, {}), final.get(name, {})
        context = SensitiveContext(before, after)
        for change in service.diff(before, after):
            for hit in service.sensitive_hits(change, context):
                out[(hit.kind, hit.key)] = (change.id, f"{change.op} {name}.{change.table} {change.id}")
    return out


def hit_keys(task: Task, initial: State, final: State) -> set[tuple[str, str]]:
    """(kind, key) of every sensitive change between two states."""
    return set(_hits_by_record(task, initial, final))


@asynccontextmanager
async def _after_reference(bench: Workbench) -> AsyncIterator[tuple[Environment, Dump | None]]:
    """What the reference left, for one use: the workspace marked where validation's own run of the reference
    ended, with its dump (rolled back afterwards), or else a fork of a fresh environment where the reference is
    played now (closed afterwards; dump None)."""
    ws = after_reference_workspace(bench)
    if ws is not None:
        with ws.run() as env:
            yield env, ws.state
        return
    env, task = bench.baseline.fork(), bench.task
    try:
        await play_steps(
            DirectDoor(env), task.reference_solution, user=user_script(task), user_door=DirectDoor(env, actor="user")
        )
        yield env, None
    finally:
        env.close()


def _ids(data: Any, depth: int = 0) -> Iterator[str]:
    """The record ids in a tool's result (a mutating tool returns the record it made or changed)."""
    if isinstance(data, Mapping) and depth <= 2:
        if isinstance(data.get("id"), str):
            yield data["id"]
        for v in data.values():
            yield from _ids(v, depth + 1)


async def _play_layer(
    state: ServiceState, bench: Workbench, cands: Sequence[Candidate], base: Mapping[str, list[dict[str, Any]]]
) -> tuple[dict[str, list[ToolStep]], dict[str, list[dict[str, Any]]]]:
    """Play candidate calls of one service one after another on its state, then roll them back: record id → the
    calls that made or changed it (last first), and the service's state after them (``base``: a dump of the
    state before them, whose lists the tables nothing wrote to share)."""
    builder = ArgBuilder(pools(bench), random.Random(seed_of(bench.task.id, "reference+sensitive")), last_first=True)
    owner: dict[str, list[ToolStep]] = {}
    mark = state.mark()
    try:
        for cand in cands:
            step = _step(builder, cand)
            result = None if step is None else await state.call(step.tool, step.arguments)
            if step is None or result is None or result.is_error:
                continue
            for rid in {*([cand.target] if cand.target else []), *_ids(result.data)}:
                owner.setdefault(rid, []).insert(0, step)
        return owner, state.dump_since(mark, base)  # rows shared with earlier dumps: read only
    finally:
        state.rollback(mark)
        state.release(mark)


async def sensitive_variants(bench: Workbench, limit: int = MAX_CANDIDATES) -> list[Adversary]:
    """One ``reference+<kind>`` adversary per sensitive kind that one extra call can commit (none when the
    task's services declare no kind). The candidate calls (at most ``limit``) are played one after another
    on what the reference left, and each sensitive change it did not make is traced to the call that made
    it; :func:`reproduces` confirms a variant when it is played alone."""
    task = bench.task
    if not any(services()[s].sensitive for s in task.services):
        return []
    initial = bench.baseline.initial
    async with _after_reference(bench) as (env, dumped):
        after_ref = env.dump() if dumped is None else dumped
        cands = candidates(task, pools(bench), touched_ids(task, initial, after_ref))[:limit]
        played = []
        for name in task.services:
            for group in _layers([c for c in cands if c.service == name]):
                owner, state = await _play_layer(env.state(name), bench, group, after_ref.get(name, {}))
                played.append((name, owner, {name: state}))
    already = hit_keys(task, initial, after_ref)
    found: dict[str, Adversary] = {}
    for name, owner, final in played:
        for (kind, key), (record_id, where) in sorted(_hits_by_record(task, initial, final, [name]).items()):
            steps = owner.get(record_id, [])
            if (kind, key) not in already and steps and kind not in found:
                found[kind] = _variant(task, kind, key, where, steps)
    return [found[k] for k in sorted(found)]


def _layers(cands: Sequence[Candidate]) -> list[list[Candidate]]:
    """The candidates in groups where no two are on the same record (each group is played on its own fork of
    its service, so no call undoes another's change: a share then an unshare), at most :data:`MAX_LAYERS`."""
    layers: list[list[Candidate]] = []
    used: list[set[str]] = []
    for cand in cands:
        k = next((i for i, u in enumerate(used) if cand.target is None or cand.target not in u), len(used))
        if k == MAX_LAYERS:
            continue
        if k == len(used):
            layers.append([])
            used.append(set())
        layers[k].append(cand)
        if cand.target is not None:
            used[k].add(cand.target)
    return layers


def reproduces(bench: Workbench, adversary: Adversary, final: State) -> bool:
    """Whether a run of a reference-plus-sensitive variant left the sensitive change it was made for."""
    return adversary.key is None or (adversary.name.split("+", 1)[-1], adversary.key) in hit_keys(
        bench.task, bench.baseline.initial, final
    )


def _step(builder: ArgBuilder, cand: Candidate) -> ToolStep | None:
    spec = services()[cand.service].tools_by_name[cand.tool]
    builder.address, builder.turn = cand.address, cand.turn
    args = builder.call(cand.service, spec, cand.target)
    return None if args is None else ToolStep(service=cand.service, tool=cand.tool, arguments=args)


def _variant(task: Task, kind: str, key: str, where: str, steps: Sequence[ToolStep]) -> Adversary:
    """The variant with the last call that touched the record; the calls before it as alternatives (when the
    last one alone does not make the change, an earlier one on the same record did)."""
    made = [
        Adversary(
            f"reference+{kind}",
            "sensitive",
            f"does the reference's work plus one {kind} on a record the task does not touch",
            [*task.reference_solution, step],
            f"{step.service}.{step.tool}: {where} ({key})",
            key,
        )
        for step in steps
    ]
    return dataclasses.replace(made[0], alternatives=tuple(made[1:]))
