"""Credentials in an agent spec or its base URL never reach run.json, the retry lines on stderr, or trajectories."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from coworkenv.harness.cli import COMMANDS
from coworkenv.harness.run import RUN_FILE
from coworkenv.harness.trajectory import FILENAME
from coworkenv.synth.contract.library import examples_dir
from coworkenv.synth.providers import redact_url_credentials, scrub

TASK = examples_dir() / "tickets-triage-new-urgent.json"
PASSWORD = "hunter2-not-a-pattern-9f8e7d"


def cli() -> click.Group:
    group = click.Group("coworkenv")
    for command in COMMANDS:
        group.add_command(command)
    return group


@pytest.fixture
def overloaded() -> Iterator[str]:
    """An OpenAI-compatible endpoint that always answers 503 with ``retry-after-ms: 0`` (retries at once)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.dumps({"error": {"message": "overloaded", "type": "server_error"}}).encode()
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("retry-after-ms", "0")
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "spec",
    [
        "openai:m@http://user:{secret}@{host}/v1",
        "openai:m@http://{secret}@{host}/v1",
        "openai:m@http://{host}/v1?api_key={secret}",
    ],
    ids=["user-password", "token-user", "query-key"],
)
def test_credentials_in_the_agent_spec_are_redacted_in_run_json_retry_lines_and_trajectories(
    tmp_path: Path, overloaded: str, spec: str, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "run"
    agent = spec.format(secret=PASSWORD, host=overloaded)
    args = ["run", "--tasks", str(TASK), "--agent", agent, "--out", str(out), "--retries", "0", "--no-progress"]
    with caplog.at_level(logging.WARNING):
        result = CliRunner().invoke(cli(), args)
    assert result.exit_code == 0, result.output
    retry_lines = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert retry_lines, "the provider's 503s were retried and logged"
    written = [(out / RUN_FILE).read_text(), (out / FILENAME).read_text(), result.output, *retry_lines]
    for text in written:
        assert PASSWORD not in text
    assert "[REDACTED]" in json.loads((out / RUN_FILE).read_text())["agent"]
    record = json.loads((out / FILENAME).read_text().splitlines()[0])
    assert record["status"] == "infra_error" and "[REDACTED]" in record["agent"]
    again = CliRunner().invoke(cli(), args)  # resuming the same run is still the same agent
    assert again.exit_code == 0 and "1 already done" in again.output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://u:KEY123456@host/v1", "http://[REDACTED]@host/v1"),
        ("https://TOKEN@github.com/x", "https://[REDACTED]@github.com/x"),
        ("http://h/v1?api_key=abc&model=m", "http://h/v1?api_key=[REDACTED]&model=m"),
        ("http://h/v1?x=1&token=abc#top", "http://h/v1?x=1&token=[REDACTED]#top"),
        ("http://example.com/a@b and mail me at a@b.com", "http://example.com/a@b and mail me at a@b.com"),
    ],
)
def test_url_credentials_are_redacted_and_ordinary_urls_kept(text: str, expected: str) -> None:
    assert redact_url_credentials(text) == expected
    assert scrub(text) == expected


def test_an_openai_agents_name_carries_no_credentials() -> None:
    pytest.importorskip("openai")
    from coworkenv.harness.agents.registry import make_agent

    agent = make_agent(f"openai:m@http://u:{PASSWORD}@127.0.0.1:9/v1")
    assert PASSWORD not in agent.name and "[REDACTED]" in agent.name
