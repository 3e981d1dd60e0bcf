"""How the task's scripted user reads its own script: the trigger of a user turn (its ``when``) and the
content words of the agent's questions. The harness's user simulator and validation by execution both use
this module, so a task's user behaves the same in a run and in its validation."""

from __future__ import annotations

import re
from dataclasses import dataclass

from coworkenv.servers.registry import get_service
from coworkenv.synth.task import Task

TOOL_SEPARATOR = "__"
"""Qualified tool names are ``<service>__<tool>``."""

_STOPWORD_TEXT = """a about above after again all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here hers him
his how i if in into is it its itself just let me more most my no nor not now of off on once only or other our ours out
over own please same shall she should so some such than that the their them then there these they this those through
to too under until up very was we were what when where which while who whom why will with would you your yours yes
okay ok tell know need want like get got make sure one two anything something thing things use using"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def keywords(text: str) -> set[str]:
    """Content words, lower-cased, with a plural 's' dropped (as the scripted user reads them)."""
    out = set()
    for w in re.findall(r"[a-z0-9][a-z0-9_\-']*", text.lower()):
        w = w.strip("'-")
        if len(w) < 3 or w in STOPWORDS:
            continue
        if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return out


@dataclass(frozen=True)
class Trigger:
    kind: str  # "finish" | "turn" | "calls" | "tool"
    value: int = 0
    tool: str = ""


def parse_trigger(when: str | None, task: Task) -> Trigger:
    """A user turn's ``when``: ``after N tool calls``, ``turn N``, ``after <tool>`` (bare or ``service__tool``);
    anything else, or nothing, means "when the agent finishes a turn"."""
    if not when:
        return Trigger("finish")
    text = when.lower()
    m = re.search(r"(\d+)\s+(?:tool\s+)?calls?\b", text)
    if m:
        return Trigger("calls", int(m.group(1)))
    m = re.search(r"\bturn\s+(\d+)", text)
    if m:
        return Trigger("turn", int(m.group(1)))
    names = {}
    for service in task.services:
        for spec in get_service(service).tools:
            qualified = f"{service}{TOOL_SEPARATOR}{spec.name}"
            names[spec.name] = names[qualified] = qualified
    for token in re.findall(r"[a-z][a-z0-9_]*", text):
        if token in names:
            return Trigger("tool", tool=names[token])
    return Trigger("finish")


def is_question(text: str) -> bool:
    return "?" in text
