"""The service author's toolkit (``coworkenv.servers.testing``): every shipped service passes the checks every
service gets, and each kind of check catches the fault it is about, naming the tool."""

from __future__ import annotations

import re
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from coworkenv.servers.kit import Service, ToolContext, tool
from coworkenv.servers.registry import EXAMPLES, SHIPPED, get_service
from coworkenv.servers.template import EXAMPLE_SEED
from coworkenv.servers.template import SERVICE as NOTES
from coworkenv.servers.testing import (
    CHECKS,
    check_bounds,
    check_described,
    check_fuzz,
    check_outcomes,
    check_service,
    check_stdio,
)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_service_passes_the_checks_every_service_gets(name: str) -> None:
    check_service(get_service(name), EXAMPLES / f"{name}.json", calls=60, stdio=False)


@pytest.mark.slow
def test_the_stdio_check_serves_a_shipped_service_from_a_fresh_interpreter() -> None:
    check_stdio("tickets", EXAMPLES / "tickets.json")


@pytest.mark.slow
def test_the_stdio_check_of_a_service_no_fresh_interpreter_knows_says_to_install_it() -> None:
    with pytest.raises(AssertionError, match="entry point"):
        check_stdio(NOTES, EXAMPLE_SEED, timeout=30)


class Echo(BaseModel):
    said: str = Field(description="What was said.")


def _with(*tools: object) -> Service:
    return Service(name="notes", title="Notes", instructions="", tables=NOTES.tables, tools=(*NOTES.tools, *tools))


def test_an_argument_without_a_limit_or_a_description_is_named() -> None:
    @tool(read_only=True)
    def count_to(ctx: ToolContext, n: int) -> Echo:
        """Count up to n and say so."""
        return Echo(said=str(n))

    with pytest.raises(AssertionError, match=re.escape("notes.count_to.properties.n: no maximum")):
        check_bounds(_with(count_to))
    with pytest.raises(AssertionError, match=re.escape("count_to(n)")):
        check_described(_with(count_to))


def test_a_tool_that_crashes_is_caught_by_the_outcome_and_fuzz_checks() -> None:
    @tool(read_only=True)
    def shout(ctx: ToolContext, text: Annotated[str, Field(max_length=50, description="Example: 'hi'")] = "") -> Echo:
        """Say the text louder (crashes on an empty text)."""
        return Echo(said=text.upper() + "!" * (1 // len(text)))

    broken = _with(shout)
    with pytest.raises(AssertionError, match=r"notes\.shout\(\{\}\): internal_error"):
        check_outcomes(broken, EXAMPLE_SEED)
    with pytest.raises(AssertionError, match=r"notes\.shout\(.*\) crashed"):
        check_fuzz(broken, EXAMPLE_SEED, calls=300)


def test_an_unknown_check_kind_is_refused_with_the_kinds() -> None:
    with pytest.raises(ValueError, match="the kinds are " + ", ".join(CHECKS)):
        check_service(NOTES, EXAMPLE_SEED, skip=("speed",))
