"""How a user asks: one request, said in one of several styles, with optional clauses around it.

A family describes *what* is asked as an :class:`Ask` — the steps (imperative verb phrases: "escalate every
stale ticket"), the situation (sentences in the user's voice), what to leave alone, what to report — written
as templates with named slots, and :func:`compose` says it in a style drawn from the builder's seeded
``rng``: a manager's instruction, a colleague's favour, a terse note, a detailed brief, a forwarded email, a
bullet list, a hurried note with a typo, or non-native English; each with or without a greeting, an aside,
a deadline and a sign-off. So the same task reads many ways and no style leaks the answer.

Slots: ``{name}`` is the value of ``name``; ``{name's}`` its possessive ("Acme Robotics'", "Ana's");
``{a name}`` the value with the right article ("an SSO outage", "a user", "an hour"). A missing or empty
slot, or stray template syntax left over, is a :class:`FamilyError` where the request is written. Slot values
are never touched by a style (no typo in a name, no change of case in a quoted subject).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from coworkenv.synth.generate.families.kit.base import FamilyError, TaskBuilder, possessive

STYLES = ("manager", "colleague", "terse", "detailed", "forwarded", "bullets", "typo", "non_native")
BOSS = ("Helen Marsh", "Head of Customer Operations")
"""Who a forwarded request comes from (a name no generated person has)."""

_SLOT = re.compile(r"\{(?:(a|an) )?([a-z_][a-z0-9_]*)('s)?\}")
_MARK = re.compile(r"\x01(\d+)\x02")
_SOUND_AN = "AEFHILMNORSX"
_A_BEFORE_VOWEL = ("uni", "use", "usu", "uti", "eu", "one", "once", "ufo", "ur")
_AN_BEFORE_H = ("hour", "honest", "honour", "honor", "heir")


def article(word: str) -> str:
    """'a' or 'an' for the word that follows, by sound: an SSO login, a URL, an hour, a user, an 8-seat plan."""
    token = re.sub(r"^[^A-Za-z0-9]+", "", word)
    head = re.split(r"[^A-Za-z0-9]", token, maxsplit=1)[0]
    if not head:
        return "a"
    if head[0].isdigit():
        return "an" if head[0] == "8" or re.match(r"^1[18](\d{3})*$", head) else "a"
    if len(head) >= 2 and head.isupper():
        return "an" if head[0] in _SOUND_AN else "a"
    low = head.lower()
    if low.startswith(_AN_BEFORE_H):
        return "an"
    if low.startswith(_A_BEFORE_VOWEL):
        return "a"
    return "an" if low[0] in "aeiou" else "a"


def with_article(phrase: str) -> str:
    return f"{article(phrase)} {phrase}"


@dataclass(frozen=True)
class Ask:
    """What one request asks, as templates with ``{slots}``.

    ``steps``: imperative verb phrases, starting lower-case, no final stop ("forward {who's} email to
    {colleague}"). ``context``: sentences in the user's voice that the steps rely on. ``avoid``: what to leave
    alone, as whole sentences. ``report``: what to tell the user, a verb phrase ("tell me which customer has
    the most"). ``topic``: a noun phrase for a subject line ("the stale enterprise tickets")."""

    steps: Sequence[str]
    context: str = ""
    avoid: str = ""
    report: str = ""
    topic: str = "a quick request"
    styles: Sequence[str] = STYLES
    """The styles this request may take (every one, unless a family must narrow them)."""


@dataclass
class _Text:
    """Text with slot values held out of reach (``\\x01n\\x02``) until the end."""

    values: list[str] = field(default_factory=list)

    def fill(self, template: str, slots: dict[str, str]) -> str:
        def one(m: re.Match[str]) -> str:
            art, name, poss = m.group(1), m.group(2), m.group(3)
            if name not in slots:
                raise FamilyError(f"the request template {template!r} names the slot {name!r}, which is not given")
            value = " ".join(str(slots[name]).split())
            if not value:
                raise FamilyError(f"the slot {name!r} of the request template {template!r} is empty")
            self.values.append(possessive(value) if poss else value)
            held = f"\x01{len(self.values) - 1}\x02"
            return f"{article(value)} {held}" if art else held

        text = _SLOT.sub(one, template)
        if re.search(r"[{}$]|%[sd]", _MARK.sub("", text)):
            raise FamilyError(f"the request template {template!r} has stray template syntax")
        return text

    def resolve(self, text: str) -> str:
        return _MARK.sub(lambda m: self.values[int(m.group(1))], text)


@dataclass(frozen=True)
class _Parts:
    steps: list[str]
    context: str
    avoid: str
    report: str
    topic: str


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def stop(text: str) -> str:
    """``text`` ending in a full stop (unless it already ends in . ! ? or a held slot ending so)."""
    text = text.rstrip()
    return text if not text or text[-1] in ".!?:" else text + "."


def series(steps: Sequence[str], rng: random.Random) -> str:
    """'a', 'a and b', 'a, b and c' (or with 'then': 'a, then b')."""
    if len(steps) == 1:
        return steps[0]
    glue = rng.choice((" and ", ", then ", " and then "))
    return ", ".join(steps[:-1]) + glue + steps[-1]


# ---------------------------------------------------------------------------------------------- clauses
GREETINGS = {
    "manager": ("Hi,", "Hello,", "Morning,", "Hi there,"),
    "colleague": ("Hey!", "Hi!", "Hey, quick one:", "Hiya,"),
    "non_native": ("Hello,", "Good morning,", "Dear colleague,", "Hello, hope you are well."),
}
ASIDES = (
    "I'm in meetings most of the day.",
    "I'm out this afternoon.",
    "This came up in the morning stand-up.",
    "I'd do it myself but my calendar is full.",
    "I'm on the road today.",
    "Sorry for the short notice.",
    "I'm catching up on my backlog.",
)
DEADLINES = (
    "Today if possible.",
    "Before the end of the day, please.",
    "No rush, but this week would be good.",
    "Ideally before lunch.",
    "It's a bit urgent.",
    "Whenever you get a minute.",
    "As soon as you can.",
)
SIGNOFFS = ("Thanks!", "Thanks, Dana", "Cheers, D.", "Thank you.", "Much appreciated.", "Thanks in advance.")
_NON_NATIVE_DEADLINES = ("Is a little urgent.", "If possible today, please.", "Please do it when you can.")
_NON_NATIVE_SIGNOFFS = ("Thank you in advance.", "Best regards, Dana", "Many thanks.")


def _maybe(rng: random.Random, options: Sequence[str], p: float) -> str:
    return rng.choice(options) if rng.random() < p else ""


def _lines(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def _greeted(greeting: str, body: str) -> str:
    """The greeting on a line of its own, as people write it."""
    return f"{greeting}\n{body}" if greeting else body


# ---------------------------------------------------------------------------------------------- styles
def _manager(p: _Parts, rng: random.Random) -> str:
    do = series(p.steps, rng)
    ask = rng.choice((f"I need you to {do}.", f"Please {do}.", f"Could you {do}?", f"Your task: {do}."))
    report = rng.choice((f"Once that's done, {p.report}.", f"Then {p.report}.", f"Afterwards, {p.report}."))
    return _greeted(
        _maybe(rng, GREETINGS["manager"], 0.5),
        _lines(
            p.context,
            _maybe(rng, ASIDES, 0.25),
            ask,
            p.avoid,
            report if p.report else "",
            _maybe(rng, DEADLINES, 0.4),
            _maybe(rng, SIGNOFFS, 0.4),
        ),
    )


def _colleague(p: _Parts, rng: random.Random) -> str:
    do = series(p.steps, rng)
    ask = rng.choice((f"Could you {do} for me?", f"Any chance you could {do}?", f"Would you {do}?", f"Can you {do}?"))
    report = rng.choice((f"And could you {p.report}?", f"Oh, and {p.report}, please.", f"Can you also {p.report}?"))
    return _greeted(
        _maybe(rng, GREETINGS["colleague"], 0.6),
        _lines(
            p.context,
            ask,
            p.avoid,
            report if p.report else "",
            _maybe(rng, ASIDES, 0.2),
            _maybe(rng, ("Thanks a lot!", "Thank you!", "You're a star.", "Cheers!"), 0.6),
        ),
    )


def _terse(p: _Parts, rng: random.Random) -> str:
    steps = [stop(cap(s)) for s in p.steps]
    return _lines(p.context, *steps, p.avoid, stop(cap(p.report)) if p.report else "")


def _detailed(p: _Parts, rng: random.Random) -> str:
    lead = rng.choice(("Background:", "For context:", "Here is the situation:"))
    if len(p.steps) == 1:
        work = f"What I need: {p.steps[0]}."
    else:
        mids = [f"then {s}" for s in p.steps[1:-1]]
        last = f"{'finally' if mids else 'then'} {p.steps[-1]}"
        work = "What I need: first, " + "; ".join([p.steps[0], *mids, last]) + "."
    report = rng.choice((f"When you're done, {p.report}.", f"At the end, {p.report}."))
    return _lines(
        f"{lead} {p.context}" if p.context else "",
        _maybe(rng, ASIDES, 0.3),
        work,
        p.avoid,
        report if p.report else "",
        rng.choice(("Take care to get the details right.", "Please double-check before you change anything.", "")),
        _maybe(rng, DEADLINES, 0.5),
        _maybe(rng, SIGNOFFS, 0.5),
    )


def _forwarded(p: _Parts, rng: random.Random) -> str:
    who, title = BOSS
    wrap = rng.choice(
        (f"Forwarding this from {who.split()[0]} - can you take care of it?", f"See {who.split()[0]}'s note below.")
    )
    report = f" When you're done, {p.report}." if p.report else ""
    body = _lines(f"Please {series(p.steps, rng)}.", p.avoid)
    return (
        f"{_lines(p.context, wrap)}{report}\n\n---------- Forwarded message ----------\nFrom: {who} ({title})\n"
        f"Subject: {cap(p.topic)}\n\nHi Dana,\n\n{body}\n\n{rng.choice(('Thanks', 'Best', 'Regards'))},\n{who}"
    )


def _bullets(p: _Parts, rng: random.Random) -> str:
    head = rng.choice(("To do:", "Can you work through this list?", "Checklist for you:", "Action items:"))
    items = [cap(s) for s in p.steps]
    if p.avoid:
        items.append(p.avoid.rstrip("."))
    if p.report:
        items.append(cap(p.report))
    mark = rng.choice(("-", "*", "•"))
    lines = [f"{mark} {i}" for i in items]
    intro = _greeted(_maybe(rng, GREETINGS["manager"], 0.3), p.context)
    return "\n".join([*([intro, ""] if intro else []), head, *lines, *([""] if rng.random() < 0.3 else [])])


TYPOS = {
    "please": ("pls", "plese"),
    "ticket": ("tikcet", "tciket"),
    "tickets": ("tikcets", "tciket"),
    "customer": ("cusotmer", "custmer"),
    "account": ("acount", "accuont"),
    "email": ("emial", "e-mial"),
    "because": ("becuase",),
    "the": ("teh",),
    "their": ("thier",),
    "which": ("whcih",),
    "everything": ("everyting",),
    "anything": ("anythign",),
    "other": ("otehr",),
    "update": ("udpate",),
    "need": ("ned",),
    "could": ("coudl",),
    "thanks": ("thansk",),
}


def _typo(p: _Parts, rng: random.Random) -> str:
    """A hurried colleague or terse note with one or two typos, never inside a slot's value."""
    text = (_colleague if rng.random() < 0.5 else _terse)(p, rng)
    words = [m for m in re.finditer(r"\b[a-z]+\b", text) if m.group(0) in TYPOS]
    for m in sorted(rng.sample(words, min(len(words), rng.choice((1, 2)))), key=lambda m: -m.start()):
        text = text[: m.start()] + rng.choice(TYPOS[m.group(0)]) + text[m.end() :]
    return text


def _non_native(p: _Parts, rng: random.Random) -> str:
    do = series(p.steps, rng)
    ask = rng.choice(
        (f"I need that you {do}.", f"Please, can you {do}?", f"Kindly {do}.", f"Is possible that you {do}?")
    )
    report = rng.choice((f"After, please {p.report}.", f"Also please {p.report}, thank you."))
    return _greeted(
        _maybe(rng, GREETINGS["non_native"], 0.6),
        _lines(
            p.context,
            ask,
            p.avoid,
            report if p.report else "",
            _maybe(rng, _NON_NATIVE_DEADLINES, 0.4),
            _maybe(rng, _NON_NATIVE_SIGNOFFS, 0.6),
        ),
    )


_RENDER: dict[str, Callable[[_Parts, random.Random], str]] = {
    "manager": _manager,
    "colleague": _colleague,
    "terse": _terse,
    "detailed": _detailed,
    "forwarded": _forwarded,
    "bullets": _bullets,
    "typo": _typo,
    "non_native": _non_native,
}


def render(ask: Ask, rng: random.Random, style: str | None = None, **slots: object) -> str:
    """``ask`` said in ``style`` (drawn from ``rng`` when None), slots filled; see the module's docstring."""
    style = style or rng.choice(tuple(ask.styles))
    if style not in _RENDER:
        raise FamilyError(f"unknown request style {style!r}; known: {', '.join(STYLES)}")
    if not ask.steps:
        raise FamilyError("a request needs at least one step")
    values = {k: str(v) for k, v in slots.items()}
    held = _Text()
    parts = _Parts(
        steps=[held.fill(s, values).strip() for s in ask.steps],
        context=" ".join(stop(held.fill(ask.context, values)).split()) if ask.context else "",
        avoid=stop(held.fill(ask.avoid, values)) if ask.avoid else "",
        report=held.fill(ask.report, values).rstrip(".") if ask.report else "",
        topic=held.fill(ask.topic, values),
    )
    text = _RENDER[style](parts, rng)
    text = "\n".join(" ".join(line.split()) for line in text.splitlines())
    text = re.sub(r"(^|[.!?] |\n|\n[-*•] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    return held.resolve(re.sub(r"\n{3,}", "\n\n", text).strip())


def compose(b: TaskBuilder, ask: Ask, **slots: object) -> str:
    """The request for ``ask``, in a style and with clauses drawn from the builder's ``rng``."""
    return render(ask, b.rng, None, **slots)
