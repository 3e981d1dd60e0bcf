"""`coworkenv play`: a task's reference solution played against services served over streamable HTTP (Harbor's
oracle). Played against a real `coworkenv serve --transport http` with a token, it leaves the reference's message in
--answer and a workspace the grader scores 1.0; a missing or bad --url, a service that is not there and a wrong
token each end in one `Error:` line."""

from __future__ import annotations

import json
import secrets
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from coworkenv.synth.contract.library import examples_dir, load_example
from coworkenv.train.cli import main
from tests.harness.openenv.plays import running
from tests.servers.test_cli_bad_input import assert_one_error_line

TASK = "payments-refund-unwanted-addon"  # one service; the reference ends with a message to the user


def invoke(*args: str, token: str | None = None) -> Result:
    env = {"COWORKENV_TOKEN": token} if token else {"COWORKENV_TOKEN": ""}
    return CliRunner().invoke(main, list(args), env=env)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # nothing listens there once the probe is closed


@contextmanager
def served(tmp_path: Path, token: str) -> Iterator[str]:
    """`coworkenv serve payments --transport http --port 0` seeded with the task's records; yields its URL."""
    task = load_example(TASK)
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(task.seed("payments")), encoding="utf-8")
    command = [sys.executable, "-m", "coworkenv.train.cli", "serve", "payments", "--db", str(tmp_path / "p.db")]
    command += ["--seed", str(seed), "--now", task.now, "--transport", "http", "--port", "0"]
    with running(command, env={"COWORKENV_TOKEN": token}) as url:
        yield url


@pytest.mark.slow
def test_the_reference_played_against_a_served_service_leaves_its_message_and_a_workspace_graded_1(
    tmp_path: Path,
) -> None:
    token = secrets.token_urlsafe(24)
    answer = tmp_path / "ws" / "ANSWER.md"
    with served(tmp_path, token) as url:
        played = invoke("play", TASK, "--url", f"payments={url}", "--answer", str(answer), token=token)
        assert played.exit_code == 0, played.output
        assert "steps ok" in played.output
        refused = invoke("play", TASK, "--url", f"payments={url}", token="x" * 24)
        assert_one_error_line(refused, "COWORKENV_TOKEN")
        final = tmp_path / "final" / "payments.db"
        snap = invoke("snapshot", "payments", "--db", str(tmp_path / "p.db"), "--out", str(final))
        assert snap.exit_code == 0, snap.output
    assert answer.read_text().strip() == load_example(TASK).reference_answer()[-1].strip()
    task_file = str(examples_dir() / f"{TASK}.json")
    graded = invoke("grade", task_file, "--dir", str(final.parent), "--answer", str(answer), "--json")
    assert graded.exit_code == 0, graded.output
    assert json.loads(graded.output)["score"] == 1.0


def test_a_service_of_the_task_without_a_url_is_one_error_line_naming_it() -> None:
    result = invoke("play", "escalate-stale-enterprise-to-account-managers", "--url", "tickets=http://127.0.0.1:1/mcp")
    assert_one_error_line(result, "crm", "email", "--url")


def test_a_url_that_is_not_service_equals_url_is_one_error_line() -> None:
    assert_one_error_line(invoke("play", TASK, "--url", "payments:http://x/mcp"), "SERVICE=")


def test_a_service_that_is_not_there_is_one_error_line_that_says_what_to_check(tmp_path: Path) -> None:
    answer = tmp_path / "ANSWER.md"
    url = f"http://127.0.0.1:{closed_port()}/mcp"
    result = invoke("play", TASK, "--url", f"payments={url}", "--answer", str(answer), "--timeout", "30")
    assert_one_error_line(result, "cannot play", url)
    assert not answer.exists()
