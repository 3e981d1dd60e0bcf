"""The grader's baseline: what every trial of one task is graded against, built once per task by whoever owns the
task's pristine environment and handed to :func:`~coworkenv.synth.contract.grader.grade` as an argument.

A :class:`Baseline` holds the task's pristine environment (seeded once; episodes and validation runs play in forks
of it, never in it), the initial state (a dump of it), the expected changes (what the reference solution changes:
stored with the task by validation, or derived here when the caller asks for it with :meth:`Baseline.of`) and the
facts grading works out once about the task (:class:`~coworkenv.synth.contract.facts.TaskFacts`). The simulated
user's edits during a trial are in that trial's audit log (actor ``user``): the grader reads them there, against
this baseline.

Who builds it: the harness's run (one per task, shared by its episodes: :mod:`coworkenv.harness.run`), the trl
environments (one per task, :mod:`coworkenv.train.trl_backends`), ``coworkenv grade``, and validation (through the
task's :class:`~coworkenv.synth.contract.runner.Workbench`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from coworkenv.servers.kit import Environment, Service
from coworkenv.servers.kit.door import DirectDoor
from coworkenv.servers.kit.environment import ServiceLookup, default_services
from coworkenv.synth.contract.expected import derive_expected, stale_keys
from coworkenv.synth.contract.facts import ParsedSeeds, TaskFacts
from coworkenv.synth.contract.play import Row, Trial, play_steps, user_script
from coworkenv.synth.contract.task import ExpectedChange, Step, Task
from coworkenv.synth.contract.verdict import audit_dicts

Dump = dict[str, dict[str, list[Row]]]


class NoExpectedChanges(ValueError):
    """A task without (current) expected changes was graded on a baseline that has none."""


@dataclass
class Baseline:
    """What one task's trials are graded against (see the module's notes)."""

    task: Task
    pristine: Environment
    """Seeded once; nothing plays in it (:meth:`fork` gives a fresh environment of the task)."""
    initial: Dump
    """The state every fresh environment of the task starts from. A trial's dump shares its lists for the tables
    nothing wrote to (``Environment.dump_over``), so grading diffs only what changed."""
    expected: list[ExpectedChange] | None
    """What the reference solution changes; None until someone derives them (grading needs them)."""
    facts: TaskFacts = field(default_factory=TaskFacts)

    @classmethod
    def seeded(cls, task: Task, parsed: ParsedSeeds | None = None, registry: ServiceLookup | None = None) -> Baseline:
        """Seed the task's pristine environment (the one seeding of the task); the expected changes are those
        stored with the task, unless they are missing or stale (:func:`~.expected.stale_keys`): then None, for the
        caller to derive (:meth:`derive_expected`, or validation from its own run of the reference).

        ``parsed``: what static validation parsed of the task's seeds (spares validating them again).
        ``registry``: where the task's services are looked up by name (default: every known service,
        ``coworkenv.servers.registry``); the baseline, and the grader after it, read them from the environment
        seeded here (:attr:`services`), never from a global."""
        usable = _usable(task, parsed or {}, registry)
        pristine = Environment.create(task.seeds(), now=task.now, parsed=usable, registry=registry)
        stored = task.expected_changes
        expected = stored if stored is not None and not stale_keys(stored) else None
        facts = TaskFacts(seeds=_normalised(task, parsed or {}, services_of(pristine)))
        return cls(task, pristine, pristine.dump_over({}), expected, facts)

    @classmethod
    def of(cls, task: Task, parsed: ParsedSeeds | None = None, registry: ServiceLookup | None = None) -> Baseline:
        """:meth:`seeded`, with the expected changes derived by playing the task's reference solution in a fork
        when the task carries none (a hand-written task not validated yet) or stale ones."""
        baseline = cls.seeded(task, parsed, registry)
        if baseline.expected is None:
            baseline.expected = baseline.derive_expected()
        return baseline

    @property
    def services(self) -> dict[str, Service]:
        """The task's services by name, as its pristine environment was seeded with them: what grading reads (tables,
        tools, sensitive kinds)."""
        return services_of(self.pristine)

    def fork(self) -> Environment:
        """A fresh environment of the task (a fork of the pristine one: ~0.2 ms, where seeding costs several ms)."""
        return self.pristine.fork()

    def expected_from(self, reference: Trial) -> list[ExpectedChange]:
        """The expected changes, from a trial of the task's reference solution."""
        return derive_expected(self.services, self.task, self.initial, reference.state, audit_dicts(reference.audit))

    def derive_expected(self) -> list[ExpectedChange]:
        """Play the task's reference solution in a fork and derive the expected changes from what it left."""
        return self.expected_from(play_now(self, self.task.reference_solution))

    def expected_changes(self) -> list[ExpectedChange]:
        """The expected changes, for grading; a baseline without them is a :class:`NoExpectedChanges` error."""
        if self.expected is None:
            raise NoExpectedChanges(
                f"task {self.task.id} has no current expected changes to grade against: validate it "
                "(`coworkenv validate` stores them), or build its baseline with Baseline.of(task), which derives them"
            )
        return self.expected

    def close(self) -> None:
        self.pristine.close()


def play_now(baseline: Baseline, steps: Sequence[Step]) -> Trial:
    """Play steps (and the task's user turns) in a fork of the baseline, through the direct door, synchronously (its
    calls never suspend): for code that is not async, or that must not give up the event loop."""
    env = baseline.fork()
    task = baseline.task
    try:
        coro = play_steps(DirectDoor(env), steps, user=user_script(task), user_door=DirectDoor(env, actor="user"))
        try:
            coro.send(None)
        except StopIteration as stop:
            outcomes, messages = stop.value
        else:
            coro.close()
            raise RuntimeError("a direct-door call suspended; play these steps with `await run_steps(...)`")
        return Trial(env.dump_over(baseline.initial), env.audit(), messages, outcomes)
    finally:
        env.close()


def services_of(env: Environment) -> dict[str, Service]:
    """The services of an environment by name (each state knows the service it was opened with)."""
    return {name: state.service for name, state in env.states.items()}


def _usable(task: Task, parsed: ParsedSeeds, registry: ServiceLookup | None) -> dict[str, Row]:
    """The seeds static validation parsed for the services the task is seeded with, where the task still holds
    those very seeds."""
    services = registry if registry is not None else default_services() or {}
    return {
        name: seed
        for name, (service, held, seed) in parsed.items()
        if services.get(name) is service and task.initial_records.get(name) is held
    }


def _normalised(
    task: Task, parsed: ParsedSeeds, services: Mapping[str, Service]
) -> dict[str, dict[str, list[dict[str, object]]]]:
    """The parsed seeds as the grader reads them (:meth:`~.verdict.Context.seed_rows`), where they are this very
    task's, parsed by the very services it was seeded with."""
    return {
        name: dict(seed)
        for name, (service, held, seed) in parsed.items()
        if services.get(name) is service and task.seed(name) is held
    }
