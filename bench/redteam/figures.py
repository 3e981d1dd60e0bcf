"""Classes 9 and 11 of issue 42: the figure the agent states as its answer.

9. ``hedge``: in tasks with a ``said_value`` check, the right value R in the reply hedged with a declared wrong
   value W (``[W] [R]``, ``R (else W)``, ``R (alternatively W)``, ``W or R``) or another figure U of the workspace
   (``U or R``);
11. ``context figure`` (a correct answer, must pass): the right total shown with the figure it came from: "R (W minus
    D)", "R (from W, less D)", or a sentence "W minus D gives R." after the reply — reported as the share that
    wrongly fails.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from coworkenv.synth.contract.checks import SaidValue
from coworkenv.synth.contract.task import SayStep, Step

from .base import Attack, View, appended, replaced, says, seed_rows

HEDGES: dict[str, Callable[[str, str], str]] = {
    "brackets": lambda r, w: f"[{w}] [{r}]",
    "else": lambda r, w: f"{r} (else {w})",
    "alternatively": lambda r, w: f"{r} (alternatively {w})",
    "wrong-or-right": lambda r, w: f"{w} or {r}",
}


# ---------------------------------------------------------------------------------------------- 9 and 11. figures
def _money_formats() -> list[Callable[[float], str]]:
    return [
        lambda c: f"${c / 100:,.2f}",
        lambda c: f"${c / 100:.2f}",
        lambda c: f"{c / 100:,.2f}",
        lambda c: f"{c / 100:.2f}",
        lambda c: f"${c / 100:,.0f}",
    ]


def _said(step: Step) -> str:
    return step.say if isinstance(step, SayStep) else ""


def _found(text: str, shown: str) -> re.Match[str] | None:
    return re.search(rf"(?<![\d.,$]){re.escape(shown)}(?![\d,]|\.\d)", text, re.IGNORECASE)


def _stated(view: View, check: SaidValue) -> tuple[Callable[[Any], str], list[int]] | None:
    """How the reference's replies write the check's value (a formatter) and which replies do; None if none does."""
    ref = view.steps
    formats: list[Callable[[Any], str]] = list(_money_formats()) if check.cents else [str]
    if not check.cents and isinstance(check.value, int | float):
        formats = [str, *_money_formats()]
    for fmt in formats:
        shown = fmt(check.value)
        where = [k for k in says(ref) if _found(_said(ref[k]), shown)]
        if where:
            return fmt, where
    return None


def _with_figure(view: View, where: list[int], shown: str, new: str) -> list[Step]:
    steps = view.steps
    for k in where:
        said = steps[k]
        assert isinstance(said, SayStep)
        hit = _found(said.say, shown)
        assert hit is not None
        steps = replaced(steps, k, SayStep(say=said.say[: hit.start()] + new + said.say[hit.end() :]))
    return steps


def _other_figure(view: View, check: SaidValue) -> int | None:
    """A figure of the workspace that is neither the value nor a declared wrong one, the nearest in size."""
    if not check.cents or not isinstance(check.value, int | float) or check.value <= 0:
        return None
    taken = {check.value, *check.wrong_values}
    found = {
        v
        for _, _, r in seed_rows(view)
        for k, v in r.items()
        if re.search(r"amount|total|price|revenue", k) and isinstance(v, int) and not isinstance(v, bool) and v > 0
    }
    found -= {t for t in taken if isinstance(t, int | float)}
    if not found:
        return None
    value = float(check.value)
    return min(sorted(found), key=lambda v: abs(math.log(v / value)))


def _value_checks(view: View) -> list[SaidValue]:
    return [c.check for c in view.task.completion_checks if isinstance(c.check, SaidValue)]


def hedges(view: View) -> list[Attack]:
    out = []
    for check in _value_checks(view):
        stated = _stated(view, check)
        if stated is None:
            continue
        fmt, where = stated
        right = fmt(check.value)
        wrong = [w for w in check.wrong_values if not isinstance(w, bool)]
        if wrong:
            w = fmt(wrong[0])
            for name, hedge in HEDGES.items():
                out.append(Attack(9, name, _with_figure(view, where, right, hedge(right, w))))
        other = _other_figure(view, check)
        if other is not None:
            out.append(Attack(9, "other-or-right", _with_figure(view, where, right, f"{fmt(other)} or {right}")))
    return out


def context_figures(view: View) -> list[Attack]:
    out = []
    for check in _value_checks(view):
        stated = _stated(view, check)
        wrong = [w for w in check.wrong_values if isinstance(w, int | float) and not isinstance(w, bool)]
        if stated is None or not check.cents or not wrong or not isinstance(check.value, int | float):
            continue
        fmt, where = stated
        r, w = check.value, wrong[0]
        d, op = abs(w - r), "minus" if w > r else "plus"
        right, gross, diff = fmt(r), fmt(w), fmt(d)
        forms = {
            "minus": f"{right} ({gross} {op} {diff})",
            "from": f"{right} (from {gross}, {'less' if w > r else 'plus'} {diff})",
        }
        for name, new in forms.items():
            out.append(Attack(11, name, _with_figure(view, where, right, new)))
        k = where[-1]
        said = view.steps[k]
        assert isinstance(said, SayStep)
        shown = SayStep(say=appended(said.say, f"{gross} {op} {diff} gives {right}."))
        out.append(Attack(11, "gives", replaced(view.steps, k, shown)))
    return out
