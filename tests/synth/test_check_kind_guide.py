"""The check-kind guide (synth/contract/CHECK_KINDS.md) stays true: every kind is a schema in the vocabulary's
union and has a judge, and every file the guide points at exists."""

from __future__ import annotations

import re
import typing

from coworkenv.synth.contract import evaluate
from coworkenv.synth.contract.checks import KINDS, AnyCheck
from tests.guides import ROOT

GUIDE = ROOT / "synth/contract/CHECK_KINDS.md"


def test_every_check_kind_has_a_schema_in_the_union_and_a_judge() -> None:
    models = typing.get_args(AnyCheck)
    assert [m.model_fields["kind"].default for m in models] == list(KINDS)
    judged = set(evaluate._EVALUATORS)
    assert [m.__name__ for m in models if m not in judged] == [], "add a judge to _EVALUATORS in evaluate.py"


def test_every_file_the_check_kind_guide_names_exists() -> None:
    links = re.findall(r"\]\(([\w/]+\.py)\)", GUIDE.read_text(encoding="utf-8"))
    assert {"checks.py", "evaluate.py", "guard.py", "validation/lint.py"} <= set(links)
    assert [link for link in links if not (GUIDE.parent / link).is_file()] == []
