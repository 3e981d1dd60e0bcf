"""Requests read like a person wrote them: every style renders without malformations (doubled words,
unbalanced quotes or brackets, a/an errors, empty slots, stray template syntax, double spaces, sentences
without a capital), and over many tasks most requests stay distinct once names, numbers, dates and ids are
normalised away."""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import cycle, islice
from typing import Any

import pytest

from coworkenv.synth.generate import families
from coworkenv.synth.generate.families import FAMILIES, shipped_families
from coworkenv.synth.generate.families.kit.base import FamilyError, TaskBuilder, tidy
from coworkenv.synth.generate.families.kit.phrasing import STYLES, Ask, article, render

LEVELS = ("easy", "medium", "hard")
SHIPPED = shipped_families()
CELLS = [(f, s, d) for f in SHIPPED for s in SHIPPED[f].service_options for d in LEVELS]
_VOWEL_A_OK = ("uni", "use", "usu", "uti", "eu", "one", "once")
_CONSONANT_AN_OK = ("hour", "honest", "heir")


def _article_error(art: str, word: str) -> bool:
    head = re.sub(r"^[^A-Za-z0-9]+", "", word)
    if not head or head[0].isdigit():
        return False
    if len(head) >= 2 and re.match(r"^[A-Z]{2,}\b", head):
        want = "an" if head[0] in "AEFHILMNORSX" else "a"
    elif head.lower().startswith(_VOWEL_A_OK):
        want = "a"
    elif head.lower().startswith(_CONSONANT_AN_OK):
        want = "an"
    else:
        want = "an" if head[0].lower() in "aeiou" else "a"
    return art.lower() != want


def _quotes_unbalanced(line: str) -> bool:
    if line.count('"') % 2:
        return True
    opened = len(re.findall(r"(?:^|[\s(])'(?=\S)", line))
    closed = len(re.findall(r"(?<=\S)'(?=[\s.,;:!?)]|$)", line))
    return closed < opened


def _brackets_unbalanced(text: str) -> bool:
    depth = {"(": 0, "[": 0}
    for ch in text:
        if ch in "([":
            depth[ch] += 1
        elif ch in ")]":
            key = "(" if ch == ")" else "["
            depth[key] -= 1
            if depth[key] < 0:
                return True
    return any(depth.values())


def malformations(text: str) -> list[str]:
    """What is wrong with a request, in words (an empty list: nothing)."""
    found = []
    if m := re.search(r"\b([A-Za-z]+)\s+\1\b", text, re.IGNORECASE):
        found.append(f"doubled word {m.group(0)!r}")
    if any(_quotes_unbalanced(line) for line in text.splitlines()):
        found.append("unbalanced quotes")
    if _brackets_unbalanced(text):
        found.append("unbalanced brackets")
    for m in re.finditer(r"(?:^|(?<=[\s(]))(a|an|A|An) (\S+)", text):
        if _article_error(m.group(1), m.group(2)):
            found.append(f"article error {m.group(0)!r}")
    if re.search(r"[{}]|\$(?!\d)|%[sd]|\x01|\x02|\bNone\b", text):
        found.append("stray template syntax")
    if "  " in text or re.search(r" [.,;:!?]|''|\(\)|\"\"", text):
        found.append("empty slot or double space")
    if re.search(r"(?:^|\s)'s\b", text):
        found.append("'s after an empty name")
    for line in text.splitlines():
        body = re.sub(r"^[-*•]\s+", "", line.strip())
        for sentence in re.split(r"(?<=[.!?])\s+", body):
            first = re.search(r"[A-Za-z]", sentence)
            if first and sentence[0].isalpha() and not sentence[0].isupper() and not re.match(r"[a-z]+[@.]", sentence):
                found.append(f"sentence without a capital: {sentence[:40]!r}")
    return found


_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"(?: \d{1,2})?(?:,? \d{4})?"
)


def normalise(request: str) -> str:
    """The request with names, numbers, dates, ids, quoted text and addresses made placeholders."""
    text = re.sub(r"\S+@\S+", "<addr>", request)
    text = re.sub(r"'[^'\n]{3,80}'(?=[\s.,;:!?)]|$)", "<quoted>", text)
    text = re.sub(_MONTH, "<date>", text)
    text = re.sub(r"\b[a-z]+_[A-Za-z0-9_]+\b|\bINV-\d+\b", "<id>", text)
    text = re.sub(r"[$+]?\d[\d,.:]*\s*(?:%|hours?|days?)?", "<n>", text)
    text = re.sub(r"\b[A-Z][a-zA-Z&'-]*(?:\s+[A-Z][a-zA-Z&'-]*)*", "<name>", text)
    return " ".join(text.lower().split())


class _Quick(TaskBuilder):
    """A builder that skips typing checks and steps (the request is all these tests read)."""

    def _typed(self, model: type[Any], what: str, doc: Any) -> Any:
        return model.model_construct(**doc) if isinstance(doc, dict) else doc


@contextmanager
def _no_background() -> Iterator[None]:
    """Families without their background records (the request does not depend on them; 10,000 builds stay fast)."""
    patched = [
        m for name, m in sys.modules.items() if name.startswith(families.__name__ + ".") and hasattr(m, "backdrop")
    ]
    saved = [m.backdrop for m in patched]
    for m in patched:
        m.backdrop = lambda b: None  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for m, f in zip(patched, saved, strict=True):
            m.backdrop = f  # type: ignore[attr-defined]


def _requests(n: int) -> list[tuple[str, str]]:
    out = []
    for i, (name, services, level) in enumerate(islice(cycle(CELLS), n)):
        family = FAMILIES[name]
        b = _Quick(family, services, level, 7919 * i + 13)  # type: ignore[arg-type]
        out.append((name, tidy(family.build(b))))
    return out


def test_the_article_follows_the_sound_of_the_next_word() -> None:
    assert [article(w) for w in ("SSO", "URL", "hour", "user", "apple", "8-seat", "11", "Acme", "MSA", "one")] == [
        "an", "a", "an", "a", "an", "an", "an", "an", "an", "a",
    ]  # fmt: skip


def test_every_style_fills_slots_possessives_and_articles() -> None:
    ask = Ask(
        steps=("forward {who's} email about '{subject}' to {colleague}", "mark it as read"),
        context="{a title} at {company} wrote to me.",
        avoid="Don't reply to {who} yourself.",
        report="tell me when it's done",
        topic="{company's} question",
    )
    slots = {"who": "Ana", "subject": "Export to CSV times out", "colleague": "Priya", "company": "Acme Robotics"}
    rng = random.Random(3)
    for style in STYLES:
        for _ in range(30):
            text = render(ask, rng, style, title="Engineering Manager", **slots)
            assert not malformations(text), (style, text, malformations(text))
            assert (
                "Ana's" in text
                and "'Export to CSV times out'" in text
                and re.search(r"\b[Aa]n Engineering Manager", text)
            )


def test_a_missing_or_empty_slot_or_stray_syntax_is_an_error_where_it_is_written() -> None:
    rng = random.Random(0)
    with pytest.raises(FamilyError, match="slot 'who'"):
        render(Ask(steps=("call {who}",)), rng, "terse")
    with pytest.raises(FamilyError, match="empty"):
        render(Ask(steps=("call {who}",)), rng, "terse", who=" ")
    with pytest.raises(FamilyError, match="stray"):
        render(Ask(steps=("pay $amount",)), rng, "terse")


def test_the_checker_catches_each_kind_of_malformation() -> None:
    for bad in (
        "Please send the the file.",
        "Reply to 'SSO login fails.",
        "Call them (today.",
        "Open a issue for it.",
        "Hi {name}, call me.",
        "Hi  Ana.",
        "Ask 's manager.",
        "Done. then call me.",
    ):
        assert malformations(bad), bad
    assert not malformations("Forward Acme Robotics' email to an SSO admin, a user and an hour later 'Ping'.")


def test_ten_thousand_requests_across_families_are_well_formed() -> None:
    with _no_background():
        requests = _requests(10_000)
    bad = [(name, text, malformations(text)) for name, text in requests if malformations(text)]
    assert not bad, f"{len(bad)} malformed, e.g. {bad[:3]}"


def test_most_of_a_thousand_requests_stay_distinct_after_normalising() -> None:
    requests = _requests(1000)
    distinct = len({normalise(text) for _, text in requests}) / len(requests)
    print(f"\ndistinct normalised requests: {distinct:.1%} of {len(requests)}")
    assert distinct >= 0.60
    per_family: dict[str, set[str]] = {}
    for name, text in requests:
        per_family.setdefault(name, set()).add(normalise(text))
    assert all(len(v) >= 8 for v in per_family.values()), {k: len(v) for k, v in per_family.items()}
