#!/usr/bin/env bash
# The project's checks: lint, format, types, tests. Run from the repository root inside the venv.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== ruff"; ruff check . && ruff format --check .
echo "== mypy"
mkdir -p .typecheck/coworkenv
for pkg in servers synth harness train; do ln -sfn "../../$pkg" ".typecheck/coworkenv/$pkg"; done
MYPYPATH=.typecheck mypy -p coworkenv.servers -p coworkenv.synth -p coworkenv.harness -p coworkenv.train
echo "== pytest"
HF_HUB_OFFLINE=1 python -m pytest "$@"
