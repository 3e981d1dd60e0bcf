"""A member's view of a large shared drive: ``search_files`` where most files are someone else's.

    python bench/bench_visibility.py [--files 6000] [--rounds 15]

The files example seed plus ``--files`` files owned by other members, each shared with one of them and every
50th with the acting member too. Each round times the same ``search_files`` call with the share test as the
tools run it (``field_holds``: a substring test in C, then the exact JSON test) and with the exact JSON test
alone (a Python call for every file the member does not own), alternating in one run. Nothing passes or fails.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from coworkenv.servers import Environment
from coworkenv.servers.kit import members, sqlfunctions

EXAMPLES = Path(__file__).parents[1] / "servers/examples"


def drive(files: int) -> dict[str, Any]:
    seed: dict[str, Any] = json.loads((EXAMPLES / "files.json").read_text())
    me = next(u["email"] for u in seed["users"] if u.get("is_primary"))
    others = [u["email"] for u in seed["users"] if u["email"] != me]
    base = seed["files"][0]
    for n in range(files):
        shares = [{"email": others[(n + 1) % len(others)], "role": "viewer"}]
        if n % 50 == 0:
            shares.append({"email": me, "role": "viewer"})
        owner = others[n % len(others)]
        seed["files"].append(
            {**base, "id": f"fil_bulk{n:05d}", "name": f"bulk {n}.txt", "owner": owner, "workspace_role": None}
            | {"shares": shares}
        )
    return seed


def json_only(column: str, field: str, value: Any) -> tuple[str, list[Any]]:
    return f"json_has_field({column}, '{field}', ?)", [value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=15)
    opts = parser.parse_args()
    with Environment.create({"files": drive(opts.files)}) as env:
        state = env.state("files")
        timings: dict[str, list[float]] = {"C test first": [], "JSON test only": []}
        found = set()
        for _ in range(opts.rounds):
            for label, test in (("C test first", sqlfunctions.field_holds), ("JSON test only", json_only)):
                members.field_holds = test  # what visible_to builds its SQL with
                started = time.perf_counter()
                result = state.call_now("search_files", {"query": "bulk 1"})
                timings[label].append((time.perf_counter() - started) * 1000)
                found.add(result.text)
        members.field_holds = sqlfunctions.field_holds
    if len(found) != 1:
        raise SystemExit("the two share tests answered differently")
    p50 = {label: sorted(t)[len(t) // 2] for label, t in timings.items()}
    print(f"search_files on a drive of {opts.files:,} more files (most not the member's), p50 of {opts.rounds}:")
    for label, ms in p50.items():
        print(f"  {label:16s} {ms:7.2f} ms")
    print(f"  ratio            {p50['JSON test only'] / p50['C test first']:7.2f}x")
    print(f"\nReproduce: python bench/bench_visibility.py --files {opts.files} --rounds {opts.rounds}")


if __name__ == "__main__":
    main()
