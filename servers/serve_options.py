"""What ``coworkenv serve``'s options for another tool surface and injected faults make: the service it serves
(``--profile``, ``--only``, ``--declared``) and the dispatcher's fault settings (``--faults``, ``--fault-seed``,
``--fault-slow``). Each problem is a ValueError in one line saying what to write instead."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from coworkenv.servers.kit.service import Service
from coworkenv.servers.kit.tool_faults import ToolFaults, parse_slow
from coworkenv.servers.registry import get_service


def served_service(service: str, profile: str | None, only: str | None, declared: str | None) -> Service:
    """The service ``serve`` serves: its own, or with ``--profile`` another tool surface on its state, narrowed to
    the ``--declared`` tools (listed as declared) and the ``--only`` ones."""
    if profile is None:
        if only is not None or declared is not None:
            raise ValueError("--only and --declared choose tools of a --profile; add --profile claw-eval:SERVICE")
        return get_service(service)
    from coworkenv.servers.claw_eval.surface import Surface, parse_declared, parse_profile

    claw = parse_profile(profile)
    declarations = None
    if declared is not None:
        text = _read(Path(declared[1:])) if declared.startswith("@") else declared
        declarations = parse_declared(text)
    try:
        chosen = Surface.of(service, claw, declarations).service()
    except KeyError as exc:
        raise ValueError(f"--profile {profile}: {exc.args[0] if exc.args else exc}") from None
    if only is not None:
        wanted = {n.strip() for n in only.split(",") if n.strip()}
        missing = sorted(wanted - {t.name for t in chosen.tools})
        if missing:
            raise ValueError(f"--only names tools {profile} does not serve on {service}: {', '.join(missing)}")
        chosen = replace(chosen, tools=tuple(t for t in chosen.tools if t.name in wanted))
    if not chosen.tools:
        raise ValueError(f"--profile {profile} leaves {service} no tools; check --only and --declared")
    return chosen


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--declared @{path}: {exc.strerror or exc}; give a readable JSON file") from None


def fault_settings(rate: float, seed: int | None, slow: str) -> ToolFaults | None:
    """``--faults`` / ``--fault-seed`` / ``--fault-slow`` as the dispatcher's fault settings (None: off)."""
    slow_s = parse_slow(slow)
    return ToolFaults(rate, seed, slow_s) if rate > 0 else None
