"""How the task's scripted user reads its own script: the trigger of a user turn (its ``when``), the moment each
turn is due (:class:`TurnSchedule`), and the content words of the agent's questions. The harness's user
simulators and validation by execution both use this module, so a task's user behaves the same in a run and in
its validation. (Nothing here imports the task module: :mod:`coworkenv.synth.contract.task` imports the triggers.)

A trigger is typed JSON, one of (see :data:`Trigger`):

- ``{"after_tool": "docs.edit_document", "count": 1}``: right after the agent's ``count``-th successful call of
  that tool (named with its service, so tools of the same name in two services are not confused);
- ``{"after_calls": 3}``: right after the agent's 3rd tool call (of any tool; failed calls count);
- ``{"after_turn": 2}``: when the agent finishes its 2nd turn;
- ``{"on_finish": true}``: when the agent finishes a turn (the default, also for a turn without ``when``).

Free text is read strictly (:func:`trigger_from_text`): only the exact phrasings of :data:`PHRASES` are
accepted and become the typed form; anything else is an error that shows the typed forms.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

TOOL_SEPARATOR = "__"
"""Qualified tool names (in the harness's tool lists) are ``<service>__<tool>``; triggers write ``service.tool``."""

NOOP_TEXT = "I'm sorry, but I can't help with that."
"""What the do-nothing agent says (the harness's ``noop``); validation's no-op run says the same, so the
user's turns fire and their edits land there as they do in a run."""


# ---------------------------------------------------------------------------------------------- triggers
_QUALIFIED = re.compile(r"[a-z][a-z0-9_-]*\.[A-Za-z_][A-Za-z0-9_]*")


class _TriggerModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AfterTool(_TriggerModel):
    """Right after the agent's ``count``-th successful call of one tool."""

    after_tool: str = Field(
        description="The tool, named with its service as 'service.tool'. Example: 'docs.edit_document'",
        json_schema_extra={"pattern": f"^{_QUALIFIED.pattern}$"},
    )
    count: int = Field(default=1, ge=1, description="Fire after this many successful calls of it (1: the first).")

    @field_validator("after_tool")
    @classmethod
    def _qualified(cls, value: str) -> str:
        if not _QUALIFIED.fullmatch(value):
            raise ValueError(
                f"name the tool with its service, as 'service.tool' (example: 'docs.edit_document'); got {value!r}"
            )
        return value

    @property
    def service(self) -> str:
        return self.after_tool.split(".", 1)[0]

    @property
    def tool(self) -> str:
        return self.after_tool.split(".", 1)[1]


class AfterCalls(_TriggerModel):
    """Right after the agent's N-th tool call, of any tool (failed calls count)."""

    after_calls: int = Field(ge=1, description="Example: 3")


class AfterTurn(_TriggerModel):
    """When the agent finishes its N-th turn."""

    after_turn: int = Field(ge=1, description="Example: 2")


class OnFinish(_TriggerModel):
    """When the agent finishes a turn (the default)."""

    on_finish: Literal[True] = Field(description="Always true.")


TYPED_FORMS = (
    '{"after_tool": "docs.edit_document", "count": 1} (after the agent\'s 1st successful call of that tool), '
    '{"after_calls": 3} (after its 3rd tool call), {"after_turn": 2} (when it finishes its 2nd turn) or '
    '{"on_finish": true} (when it finishes a turn; the default)'
)
_KINDS: dict[str, type[_TriggerModel]] = {
    "after_tool": AfterTool,
    "after_calls": AfterCalls,
    "after_turn": AfterTurn,
    "on_finish": OnFinish,
}


def _trigger_kind(value: Any) -> str | None:
    """Which trigger a value is: the first of its keys that names a kind (other keys are then rejected)."""
    if isinstance(value, _TriggerModel):
        return next(k for k, cls in _KINDS.items() if isinstance(value, cls))
    if isinstance(value, dict):
        return next((k for k in _KINDS if k in value), None)
    return None


Trigger = Annotated[
    Annotated[AfterTool, Tag("after_tool")]
    | Annotated[AfterCalls, Tag("after_calls")]
    | Annotated[AfterTurn, Tag("after_turn")]
    | Annotated[OnFinish, Tag("on_finish")],
    Discriminator(
        _trigger_kind,
        custom_error_type="trigger_unknown",
        custom_error_message=f"not a trigger; write one of {TYPED_FORMS}",
    ),
]
"""When a user turn fires: ``after_tool`` | ``after_calls`` | ``after_turn`` | ``on_finish``."""

ON_FINISH = OnFinish(on_finish=True)

PHRASES = ("when the agent finishes a turn", "when the agent finishes its turn", "turn N", "at turn N",
           "after N tool calls", "after service.tool")  # fmt: skip
"""The only free-text ``when`` phrasings read (case and spacing aside); each becomes its typed form."""

_PHRASE_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], dict[str, Any]]], ...] = (
    (re.compile(r"when the agent finishes (?:a|its) turn"), lambda m: {"on_finish": True}),
    (re.compile(r"(?:at )?turn (\d+)"), lambda m: {"after_turn": int(m.group(1))}),
    (re.compile(r"after (\d+) tool calls?"), lambda m: {"after_calls": int(m.group(1))}),
    (
        re.compile(r"after ([a-z][a-z0-9_-]*)(?:\.|__)([a-z_][a-z0-9_]*)"),
        lambda m: {"after_tool": f"{m.group(1)}.{m.group(2)}"},
    ),
)


def trigger_from_text(text: str) -> dict[str, Any]:
    """The typed form of one of the exact :data:`PHRASES`; any other text is a ValueError showing the typed forms."""
    phrase = " ".join(text.lower().split())
    for pattern, typed in _PHRASE_RULES:
        m = pattern.fullmatch(phrase)
        if m:
            return typed(m)
    raise ValueError(
        f"unknown trigger phrase {text!r}; write a typed trigger: {TYPED_FORMS}. The only phrases read are: "
        + ", ".join(repr(p) for p in PHRASES)
        + "."
    )


# ---------------------------------------------------------------------------------------------- the schedule
@dataclass
class TurnSchedule:
    """Which of the user's turns is due as the agent works (one schedule per run). Turns come in order, at most
    one per event of the agent:

    - right after each of its tool calls (failed ones count as calls): the next turn, if its trigger is
      ``after_calls`` or ``after_tool`` and is now met;
    - when it finishes a turn: the next turn, if its trigger is met (``on_finish`` always is), or else if the
      user has nothing other to say (``nothing_else``): the user then moves the work on rather than end the
      conversation (so a turn whose trigger never comes is still delivered).
    """

    triggers: list[Trigger]
    next_turn: int = 0
    tool_calls: int = 0
    agent_turns: int = 0
    successes: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, whens: Sequence[Trigger | None]) -> TurnSchedule:
        """The schedule of turns with these ``when`` values (None: ``on_finish``)."""
        return cls([ON_FINISH if w is None else w for w in whens])

    @property
    def exhausted(self) -> bool:
        return self.next_turn >= len(self.triggers)

    def met(self, trigger: Trigger, *, finished: bool) -> bool:
        """Is the trigger met now (``finished``: the agent has just finished a turn)?"""
        if isinstance(trigger, AfterTool):
            return self.successes[trigger.after_tool] >= trigger.count
        if isinstance(trigger, AfterCalls):
            return self.tool_calls >= trigger.after_calls
        if isinstance(trigger, AfterTurn):
            return finished and self.agent_turns >= trigger.after_turn
        return finished

    def after_tool_call(self, service: str, tool: str, *, ok: bool) -> int | None:
        """The index of the turn due right after this tool call of the agent, if any."""
        self.tool_calls += 1
        if ok:
            self.successes[f"{service}.{tool}"] += 1
        return self._due(finished=False, nothing_else=False)

    def at_finished_turn(self, *, nothing_else: bool) -> int | None:
        """The index of the turn due now that the agent has finished a turn, if any (``nothing_else``: the user
        has nothing other to answer it with)."""
        self.agent_turns += 1
        return self._due(finished=True, nothing_else=nothing_else)

    def _due(self, *, finished: bool, nothing_else: bool) -> int | None:
        if self.exhausted:
            return None
        if not (nothing_else or self.met(self.triggers[self.next_turn], finished=finished)):
            return None
        self.next_turn += 1
        return self.next_turn - 1


# ---------------------------------------------------------------------------------------------- questions
_STOPWORD_TEXT = """a about above after again all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here hers him
his how i if in into is it its itself just let me more most my no nor not now of off on once only or other our ours out
over own please same shall she should so some such than that the their them then there these they this those through
to too under until up very was we were what when where which while who whom why will with would you your yours yes
okay ok tell know need want like get got make sure one two anything something thing things use using"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


_WORD = re.compile(r"[a-z0-9][a-z0-9_\-']*")
_CONTENT: dict[str, str] = {}
"""Each word seen → its content form ('' for a stopword or a short word): words repeat across texts."""


def _content(word: str) -> str:
    w = word.strip("'-")
    if len(w) < 3 or w in STOPWORDS:
        w = ""
    elif len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(_CONTENT) > 200_000:
        _CONTENT.clear()
    _CONTENT[word] = w
    return w


def keywords(text: str) -> set[str]:
    """Content words, lower-cased, with a plural 's' dropped (as the scripted user reads them)."""
    known = _CONTENT
    out = {known[w] if w in known else _content(w) for w in set(_WORD.findall(text.lower()))}
    out.discard("")
    return out


def is_question(text: str) -> bool:
    return "?" in text


def asked_facts(agent_text: str, facts: Sequence[str], request_words: set[str]) -> list[str]:
    """The held-back facts the agent's text asks about, in the task's order: the text is a question and shares
    a content word with the fact (words of the request do not count, unless the fact has no other words)."""
    if not is_question(agent_text):
        return []
    asked = keywords(agent_text)
    out = []
    for fact in facts:
        words = keywords(fact)
        if ((words - request_words) or words) & asked:
            out.append(fact)
    return out
