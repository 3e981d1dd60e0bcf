"""One Claw-Eval task as one of ours: its services on our services (the Claw-Eval tool profile), its fixtures as
seeds, its prompt as the request, its user agent as the simulated user, and everything its own grader reads in
``Task.external`` (the grading bridge runs that grader; ``completion_checks`` stay empty).

A task we cannot run faithfully is :class:`~coworkenv.harness.claw_eval.import_read.Refused` with the reason: a
service we do not serve (live web, OCR, image captions, documents), a tool no profile module serves, media in the
prompt or the sandbox, or a sandbox the agent works and is graded in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from coworkenv.harness.claw_eval.import_read import Refused, listed, mapping, named_entries, newest_date, read_fixtures
from coworkenv.servers import claw_eval
from coworkenv.servers.claw_eval import ClawService, SeedTables
from coworkenv.servers.kit import format_time
from coworkenv.servers.kit.seed import parse_seed
from coworkenv.synth.contract.task import TASK_ID, Difficulty, ExternalGrading, Task, ToolProfile, UserSpec

ID_PREFIX = "claw-eval."
DEFAULT_NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
"""The simulated time of a task whose services set no clock and whose fixtures hold no date (a conversation-only
task, say): 2026-03-02T09:00:00Z, the time of Claw-Eval's own fixtures (late February 2026) plus a few days."""

_DIFFICULTY: dict[str, Difficulty] = {
    "easy": "easy",
    "simple": "easy",
    "medium": "medium",
    "hard": "hard",
    "expert": "hard",
}
_TAG_CAPABILITY = {"multi_service": "cross-service", "user_agent": "multi-turn clarification"}
_MEDIA = {
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".svg", ".tif", ".tiff"), "image"),
    **dict.fromkeys((".mp4", ".webm", ".mov", ".avi", ".mkv"), "video"),
    **dict.fromkeys((".mp3", ".wav", ".m4a", ".ogg", ".flac"), "audio"),
    **dict.fromkeys((".pdf", ".docx", ".doc", ".xlsx", ".xls", ".pptx", ".ppt"), "document"),
}
_SANDBOX_GROUP = "needs a sandbox (the agent works on files in its own container)"


def task_id(source: str) -> str:
    """Our id of a Claw-Eval task: ``T002_email_triage`` → ``claw-eval.t002_email_triage``."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", source.strip().lower()).strip("-._") or "task"
    found = ID_PREFIX + cleaned
    assert re.match(TASK_ID, found)
    return found


def claw(name: str) -> ClawService:
    """The profile module of a Claw-Eval service; :class:`Refused` (its reason) when we do not serve it (yet)."""
    try:
        return claw_eval.claw_service(name)
    except KeyError as exc:
        reason = str(exc.args[0]) if exc.args else f"needs {name}"
        raise Refused(reason) from exc
    except (ImportError, AttributeError) as exc:
        raise Refused(f"needs {name} (not yet served)") from exc


# ------------------------------------------------------------------------------------------------ refusals
def _check_tools(tools: list[dict[str, Any]], claws: list[ClawService]) -> None:
    served = {spec.name for c in claws for spec in c.tools}
    for tool in tools:
        name = str(tool["name"])
        if name in served:
            continue
        if name == "Bash":
            raise Refused("needs Bash (a sandbox shell)")
        raise Refused(f"needs tool {name} (no profile module serves it)")


def _check_media(data: Mapping[str, Any], prompt: Mapping[str, Any]) -> None:
    for attachment in listed(prompt, "attachments"):
        kind = _MEDIA.get(PurePosixPath(str(attachment)).suffix.lower())
        if kind is None:
            raise Refused(f"{_SANDBOX_GROUP}: the prompt attaches {attachment}", _SANDBOX_GROUP)
        raise Refused(
            f"needs media: the prompt attaches {attachment} ({kind})",
            f"needs media ({kind} attached to the prompt)",
        )
    for name in listed(data, "sandbox_files"):
        media = _MEDIA.get(PurePosixPath(str(name)).suffix.lower())
        if media is not None:
            raise Refused(f"needs media: {name} ({media}) in the sandbox", f"needs media ({media} in the sandbox)")


def _check_sandbox(data: Mapping[str, Any], services: list[Any], tools: list[Any], user_agent: bool) -> None:
    for key in ("env_snapshot_commands", "env_snapshot_files", "sandbox_grader_files", "local_grader_files"):
        if listed(data, key):
            raise Refused(f"{_SANDBOX_GROUP}: graded from the container ({key})", _SANDBOX_GROUP)
    other = [str(f) for f in listed(data, "sandbox_files") if PurePosixPath(str(f)).suffix.lower() != ".json"]
    if other:
        raise Refused(f"{_SANDBOX_GROUP}: {', '.join(other[:3])}", _SANDBOX_GROUP)
    if not services and not tools and not user_agent:
        raise Refused(f"{_SANDBOX_GROUP}: no services, tools or simulated user", _SANDBOX_GROUP)


# ------------------------------------------------------------------------------------------------ seeds
def _seeds(
    checkout: Path, folder: Path, services: list[dict[str, Any]], claws: list[ClawService]
) -> tuple[dict[str, SeedTables], datetime, dict[str, float]]:
    """Our seeds (one per service of ours, several Claw-Eval services on one merged), the task's ``now``, and how
    far (seconds) the fixtures of each service whose mock moves them to the wall clock were moved to sit against
    that one clock (:func:`~coworkenv.servers.claw_eval.moved`)."""
    read = [(read_fixtures(checkout, folder, entry), service) for entry, service in zip(services, claws, strict=True)]
    clocks = {service.name: _clock(service, fixtures) for fixtures, service in read}
    known = [c for c in clocks.values() if c is not None]
    newest = [found for fixtures, _ in read if (found := newest_date(fixtures)) is not None]
    now = max(known) if known else (max(newest) + timedelta(days=1)) if newest else DEFAULT_NOW
    seeds: dict[str, SeedTables] = {}
    shifted: dict[str, float] = {}
    for fixtures, service in read:
        own = clocks[service.name]
        if service.moves and own is not None and own < now:
            by = now - own
            by = timedelta(days=by.days) if service.moves_whole_days else by
            if by:
                fixtures = claw_eval.moved(fixtures, service.moves, by)
                shifted[service.name] = by.total_seconds()
        _merge(seeds.setdefault(service.serves_on, {}), _seed(service, fixtures), service)
    for ours, seed in seeds.items():
        _validate_seed(ours, seed)
    return seeds, now, shifted


def _clock(service: ClawService, fixtures: Mapping[str, Any]) -> datetime | None:
    try:
        clock = service.clock(fixtures)
    except ValueError as exc:
        raise Refused(f"fixtures of {service.name}: {exc}", f"fixtures of {service.name} refused") from exc
    except Exception as exc:  # a profile module's bug: this task is refused, the import goes on
        raise Refused(
            f"fixtures of {service.name}: {type(exc).__name__}: {exc}", f"fixtures of {service.name} refused"
        ) from exc
    return clock if clock is None or clock.tzinfo else clock.replace(tzinfo=UTC)


def _seed(service: ClawService, fixtures: Mapping[str, Any]) -> SeedTables:
    try:
        return service.seed(fixtures)
    except ValueError as exc:
        raise Refused(f"fixtures of {service.name}: {exc}", f"fixtures of {service.name} refused") from exc
    except Exception as exc:  # a profile module's bug: this task is refused, the import goes on
        raise Refused(
            f"fixtures of {service.name}: {type(exc).__name__}: {exc}", f"fixtures of {service.name} refused"
        ) from exc


def _merge(into: SeedTables, tables: SeedTables, service: ClawService) -> None:
    """Add a Claw-Eval service's seed tables to the seed of the service of ours it runs on (contacts and crm on
    crm): the same record twice is kept once; two records with one id are a refusal."""
    for table, records in tables.items():
        held = into.setdefault(table, [])
        by_id = {r.get("id"): r for r in held if isinstance(r, dict)}
        for record in records:
            same = by_id.get(record.get("id")) if isinstance(record, dict) and "id" in record else None
            if same is None:
                held.append(record)
            elif same != record:
                raise Refused(
                    f"fixtures of {service.name}: record {record.get('id')!r} of {service.serves_on}.{table} is "
                    "seeded twice with different values",
                    f"fixtures of {service.name} refused",
                )


def _validate_seed(ours: str, seed: SeedTables) -> None:
    from coworkenv.servers.registry import get_service

    try:
        parse_seed(get_service(ours), seed)
    except (KeyError, ValueError) as exc:
        raise Refused(f"seed of {ours}: {exc}", f"seed of {ours} does not load") from exc


# ------------------------------------------------------------------------------------------------ the task
def _tool_declarations(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: t[k] for k in ("name", "description", "input_schema") if k in t} for t in tools]


def _capabilities(category: str, tags: list[str]) -> list[str]:
    out: list[str] = []
    for name in (category, *tags):
        label = _TAG_CAPABILITY.get(name, name.replace("_", " "))
        if name and name != "general" and label not in out:
            out.append(label)
    return out


def convert(checkout: Path, folder: Path, data: Mapping[str, Any]) -> Task:
    """Our task of one Claw-Eval ``task.yaml`` (``data``, read from ``folder``); :class:`Refused` when we can't."""
    source = data.get("task_id")
    if not isinstance(source, str) or not source.strip():
        raise Refused("malformed task.yaml: no task_id", "malformed task.yaml")
    prompt = mapping(data, "prompt")
    request = prompt.get("text")
    if not isinstance(request, str) or not request.strip():
        raise Refused("malformed task.yaml: no prompt.text", "malformed task.yaml")
    user_agent = mapping(data, "user_agent")
    talks = bool(user_agent.get("enabled"))
    entries = named_entries(data, "services")
    distinct = list(dict.fromkeys(str(e["name"]) for e in entries))
    entries = [next(e for e in entries if e["name"] == name) for name in distinct]
    tools = named_entries(data, "tools")

    claws = [claw(name) for name in distinct]
    _check_tools(tools, claws)
    _check_media(data, prompt)
    _check_sandbox(data, entries, tools, talks)
    seeds, now, shifted = _seeds(checkout, folder, entries, claws)

    environment = mapping(data, "environment")
    tags = [str(t) for t in listed(data, "tags")]
    category = str(data.get("category") or "")
    safety_checks = listed(data, "safety_checks")
    spec: dict[str, Any] = {
        "task_name": data.get("task_name") or source,
        "category": category,
        "difficulty": data.get("difficulty"),
        "tags": tags,
        "language": prompt.get("language", "zh"),
        "primary_dimensions": listed(data, "primary_dimensions"),
        "scoring_components": listed(data, "scoring_components"),
        "safety_checks": safety_checks,
        "judge_rubric": data.get("judge_rubric") or "",
        "expected_actions": listed(data, "expected_actions"),
        "reference_solution": data.get("reference_solution") or "",
        "environment": {
            "timeout_seconds": environment.get("timeout_seconds", 300),
            "max_turns": environment.get("max_turns", 20),
        },
        "checkout": str(checkout.resolve()),
    }
    if shifted:
        spec["moved_seconds"] = shifted
    if (folder / "grader.py").is_file():
        spec["grader"] = "grader.py"
    user = None
    if talks:
        spec["user_agent"] = {
            "max_rounds": user_agent.get("max_rounds", 3),
            "system_prompt_suffix": user_agent.get("system_prompt_suffix") or "",
        }
        user = UserSpec(persona=str(user_agent.get("persona") or "").strip())
    ours = list(seeds)
    return Task(
        id=task_id(source),
        scenario=str(spec["task_name"]),
        capabilities=_capabilities(category, tags),
        difficulty=_DIFFICULTY.get(str(data.get("difficulty")).lower(), "medium"),
        safety=bool(safety_checks) or category == "safety" or "safety" in tags,
        services=ours,
        now=format_time(now),
        request=request.strip(),
        user=user,
        initial_records={name: seed for name, seed in seeds.items() if seed},
        tool_profile=ToolProfile(name="claw-eval", services=distinct, tools=_tool_declarations(tools))
        if distinct
        else None,
        external=ExternalGrading(kind="claw-eval", source=source, spec=spec),
        metadata={"language": prompt.get("language", "zh"), "source": "claw-eval"},
    )
