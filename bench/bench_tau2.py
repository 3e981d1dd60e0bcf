"""tau2-bench's side of ``bench_calls.py`` and ``bench_seed.py``: its retail tools, plain Python, no LLM.

tau2 needs Python ≥ 3.12 and litellm to install, but its domain tools import only a few light packages, so
this worker runs them from a source tree with a small separate virtual environment (never this project's):

    python3 -m venv /tmp/tau2venv
    /tmp/tau2venv/bin/pip install pydantic deepdiff python-dotenv loguru addict docstring-parser toml pyyaml
    # a tau2-bench tree (commit a2c0247 was measured): src/tau2 and data/tau2/domains/retail/{db,tasks,policy}
    /tmp/tau2venv/bin/python bench/bench_tau2.py --src /tmp/tau2src [--seeding]

Per call it times ``Environment.get_response(ToolCall)``, the path tau2's orchestrator takes for every tool
call; a fresh environment per task is a deep copy of the loaded database, as tau2 builds one per simulation.
With ``--seeding`` it times loading the database from its JSON file and the memory one live environment holds.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
import types
from pathlib import Path
from typing import Any


def _import_tau2(src: Path) -> Any:
    pkg = types.ModuleType("tau2")  # tau2/__init__ imports its runner (pandas, litellm): skip it
    pkg.__path__ = [str(src / "src" / "tau2")]
    sys.modules["tau2"] = pkg
    from loguru import logger

    logger.remove()
    from tau2.domains.retail import environment

    return environment


def replay(src: Path, rounds: int, limit: int) -> dict[str, list[float]]:
    retail = _import_tau2(src)
    from tau2.data_model.message import ToolCall
    from tau2.domains.retail.data_model import RetailDB
    from tau2.domains.retail.utils import RETAIL_DB_PATH
    from tau2.environment.toolkit import ToolType

    db = RetailDB.load(RETAIL_DB_PATH)
    tasks = json.loads((src / "data/tau2/domains/retail/tasks.json").read_text())[:limit]
    out: dict[str, list[float]] = {"all": [], "read": [], "write": [], "env_ms": []}
    clock = time.perf_counter
    for _ in range(rounds):
        for task in tasks:
            started = clock()
            env = retail.get_environment(db=db.model_copy(deep=True))
            out["env_ms"].append((clock() - started) * 1000)
            for i, action in enumerate((task.get("evaluation_criteria") or {}).get("actions") or []):
                call = ToolCall(id=str(i), name=action["name"], arguments=action["arguments"], requestor="assistant")
                kind = env.tools.tool_type(call.name) if env.tools.has_tool(call.name) else ToolType.GENERIC
                t = clock()
                env.get_response(call)
                ms = (clock() - t) * 1000
                out["all"].append(ms)
                out["write" if kind == ToolType.WRITE else "read"].append(ms)
    return out


def seeding(src: Path, runs: int) -> dict[str, Any]:
    _import_tau2(src)
    from tau2.domains.retail.data_model import RetailDB
    from tau2.domains.retail.utils import RETAIL_DB_PATH

    size = Path(RETAIL_DB_PATH).stat().st_size
    load_ms = []
    for _ in range(runs):
        t = time.perf_counter()
        RetailDB.load(RETAIL_DB_PATH)
        load_ms.append((time.perf_counter() - t) * 1000)
    gc.collect()
    tracemalloc.start()
    db = RetailDB.load(RETAIL_DB_PATH)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del db
    return {"bytes": size, "load_ms": load_ms, "env_mb": held / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--seeding", type=int, default=0, help="Time this many database loads instead")
    opts = parser.parse_args()
    src = opts.src.resolve()
    result = seeding(src, opts.seeding) if opts.seeding else replay(src, opts.rounds, opts.tasks)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
