"""verifiers' own OpenEnv taskset (``verifiers[openenv]==0.4.0``, in its venv under ``.tools/``) runs our tasks
against a real ``coworkenv openenv serve`` on 127.0.0.1 through ``vf-eval``, with a scripted OpenAI-compatible model
standing in: a stdlib HTTP server on 127.0.0.1 speaking ``/v1/chat/completions`` (streamed, as verifiers' chat
program asks) that answers each request with the next action of the task's reference solution.

verifiers 0.4.0's ``OpenEnvEnv`` hands the model each observation with the action schema as a user turn and parses
the model's reply *text* as the OpenEnv action (``parse_action``: JSON, or fenced JSON), so the scripted model's
reply is a ``call_tool`` action as JSON, ``{"type": "call_tool", "tool_name": "<service>__<tool>" | "reply",
"arguments": {...}}``; an OpenAI ``tool_calls`` answer would never reach the environment (the chat program has no
such tool). The run's reward is OpenEnv's summed step rewards (``openenv_reward``): our grader's score."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from coworkenv.synth.contract.taskfile import load_task, save_tasks
from coworkenv.synth.generate.families import get_family
from tests.harness.openenv.plays import EXAMPLES, client_venv, reference_actions, served

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

REQUIREMENT = "verifiers[openenv]==0.4.0"
EXAMPLE_IDS = ["tickets-triage-new-urgent", "payments-refund-unwanted-addon"]
PASS_MARK = 0.75
NOOP_TEXT = "I did not do anything."
EVAL_TIMEOUT_S = 240
PATH = os.environ.get("PATH", "/usr/bin:/bin")
MODEL_IDLE_S = 300.0  # the scripted model stops itself after this long without a request


def _action(tool_name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"type": "call_tool", "tool_name": tool_name, "arguments": arguments})


class ScriptedModel(ThreadingHTTPServer):
    """``/v1/chat/completions`` on 127.0.0.1: model ``reference`` answers a request with the next action of its
    task's reference solution (the task read from the first user turn, the step from how many assistant turns the
    conversation holds), then replies "Done."; model ``noop`` only replies. Streamed as SSE when asked (verifiers asks)."""

    daemon_threads = True

    def __init__(self, scripts: dict[str, list[dict[str, Any]]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.scripts = scripts
        self.requests: list[dict[str, Any]] = []
        self.last_seen = time.monotonic()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def answer(self, body: dict[str, Any]) -> str:
        self.requests.append(body)
        messages = body["messages"]
        first = next(m for m in messages if m["role"] == "user")
        text = first["content"] if isinstance(first["content"], str) else first["content"][0]["text"]
        task_id = json.loads(text)["observation"]["task_id"]
        step = sum(m["role"] == "assistant" for m in messages)
        actions = self.scripts[task_id] if body["model"] == "reference" else []
        if step < len(actions):
            return _action(actions[step]["tool_name"], actions[step]["arguments"])
        return _action("reply", {"text": "Done." if actions else NOOP_TEXT})


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedModel

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.server.last_seen = time.monotonic()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        content = self.server.answer(body)
        base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time())}
        base["model"] = body["model"]
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**base, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
        ]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        if not body.get("stream"):
            message = {"role": "assistant", "content": content}
            data = json.dumps({**base, "object": "chat.completion", "choices": [{"index": 0, "message": message}]})
        raw = data.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if body.get("stream") else "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@contextmanager
def scripted_model(scripts: dict[str, list[dict[str, Any]]]) -> Iterator[ScriptedModel]:
    """The scripted model serving on a free port of 127.0.0.1; shut down on exit, or by itself once idle."""
    model = ScriptedModel(scripts)
    thread = threading.Thread(target=model.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    stopped = threading.Event()

    def watchdog() -> None:
        while not stopped.wait(1.0):
            if time.monotonic() - model.last_seen > MODEL_IDLE_S:
                model.shutdown()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        yield model
    finally:
        stopped.set()
        model.shutdown()
        model.server_close()
        thread.join(timeout=10)


def eval_toml(model: str, model_url: str, env_url: str, task_ids: list[str], out: Path) -> str:
    """vf-eval's config for verifiers' OpenEnv taskset against our server (a file: in 0.4.0 ``vf-eval openenv
    --env.taskset.base_url ...`` fails before it reads its flags, building OpenEnvConfig without them)."""
    resets = ", ".join(f'{{task_id = "{i}"}}' for i in task_ids)
    return f"""\
model = "{model}"
push = false
output_dir = "{out}"

[client]
base_url = "{model_url}"

[run]
name = "coworkenv-{model}"

[env.taskset]
id = "openenv"
base_url = "{env_url}"
resets = [{resets}]

[env.player]
max_turns = 40
harness = {{id = "null"}}
runtime = {{type = "subprocess"}}
timeout = {{rollout = 120}}
"""


def vf_eval(python: Path, config: Path, cwd: Path) -> list[dict[str, Any]]:
    """``vf-eval @ CONFIG --no-rich`` in verifiers' venv; the run's episodes (one per task: its traces, ``ok``)."""
    done = subprocess.run(
        [str(python.with_name("vf-eval")), "@", str(config), "--no-rich"],
        capture_output=True,
        text=True,
        timeout=EVAL_TIMEOUT_S,
        cwd=cwd,
        env={**{k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}, "PATH": f"{python.parent}:{PATH}"},
    )
    assert done.returncode == 0, (done.stderr or done.stdout)[-3000:]
    traces = list(cwd.glob("out/*/traces.jsonl"))
    assert len(traces) == 1, (traces, done.stderr[-3000:])
    return [json.loads(line) for line in traces[0].read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def python() -> Path:
    try:
        return client_venv("verifiers-0.4.0", REQUIREMENT)
    except pytest.skip.Exception as exc:
        pytest.skip(f"verifiers' venv could not be built: {exc}")


@pytest.fixture(scope="module")
def tasks() -> list[Any]:
    chosen = [load_task(EXAMPLES / f"{i}.json") for i in EXAMPLE_IDS]
    return [*chosen, get_family("crm-clarify-contact").make(("crm",), "easy", 7)]


def test_vf_eval_scores_our_tasks_via_verifiers_openenv_taskset_reference_one_reply_only_below_the_pass_mark(
    python: Path, tasks: list[Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("verifiers-tasks")
    save_tasks(tasks, folder / "tasks.jsonl")
    scripts = {t.id: reference_actions(t) for t in tasks}
    ids = [t.id for t in tasks]
    with served(folder) as env_url, scripted_model(scripts) as model:
        runs = {}
        for name in ("reference", "noop"):
            cwd = tmp_path_factory.mktemp(f"vf-eval-{name}")
            config = cwd / "eval.toml"
            config.write_text(eval_toml(name, model.url, env_url, ids, cwd / "out"), encoding="utf-8")
            runs[name] = (config, cwd)
        with ThreadPoolExecutor(len(runs)) as pool:
            traces = dict(zip(runs, pool.map(lambda run: vf_eval(python, *run), runs.values()), strict=True))
    for name, episodes in traces.items():
        assert sorted(e["task"]["data"]["reset"]["task_id"] for e in episodes) == sorted(ids), name
        for episode in episodes:
            (trace,) = episode["traces"]
            said = (episode["task"]["data"]["reset"], trace["stop_condition"], trace["errors"], trace["rewards"])
            assert episode["ok"] and trace["ok"], said
            reward = trace["rewards"]["openenv_reward"]["score"]
            if name == "reference":
                assert reward == 1.0, said
            else:
                assert reward < PASS_MARK, said
    asked = {r["model"] for r in model.requests}
    assert asked == {"reference", "noop"} and all(r.get("stream") for r in model.requests)
