"""Harbor for the tests: its task model on this interpreter (installed without dependencies into .tools/harbor:
Harbor declares Python >= 3.12, and its task model needs only ``typing.override`` here), and Harbor whole with its
dependencies in a venv of a Python >= 3.12 found on this machine (.tools/harbor-<version>-full, built once from
the registry under a lock, reused after)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import typing_extensions

from tests.harness.openenv.plays import client_venv

HARBOR = "harbor==0.25.0"
TOOLS = Path(__file__).parents[3] / ".tools"  # git-ignored
HARBOR_TARGET = TOOLS / "harbor"


def harbor_on_path() -> None:
    """Make ``import harbor`` work on this interpreter: the pinned release without its dependencies in
    .tools/harbor (enough for its task model)."""
    if sys.version_info < (3, 12) and not hasattr(typing, "override"):
        typing.override = typing_extensions.override  # type: ignore[attr-defined]
    try:
        import harbor  # noqa: F401
    except ImportError:
        if not (HARBOR_TARGET / "harbor").is_dir():
            cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(HARBOR_TARGET), "--no-deps"]
            cmd += ["--ignore-requires-python", HARBOR, "toml", "pathspec"]
            subprocess.run(cmd, capture_output=True, timeout=300, check=False)
        sys.path.insert(0, str(HARBOR_TARGET))


def python_312() -> str | None:
    """A Python >= 3.12 interpreter on this machine (on PATH, or one pyenv installed), or None."""
    candidates = [shutil.which(name) for name in ("python3.12", "python3.13", "python3.14")]
    root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(f"{root}/versions/3.1[2-9]*/bin/python3"))
    for candidate in filter(None, candidates):
        try:
            done = subprocess.run(
                [candidate, "-c", "import sys, venv; sys.exit(sys.version_info < (3, 12))"],
                capture_output=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return candidate
    return None


def harbor_venv() -> Path:
    """The python of a venv with Harbor installed whole (Python >= 3.12); skips, saying why, when this machine has
    no such Python or pip cannot reach the registry."""
    base = python_312()
    if base is None:
        pytest.skip(
            "no Python >= 3.12 on this machine for Harbor's own linter (the task model was checked on this one)"
        )
    return client_venv(f"{HARBOR.replace('==', '-')}-full", HARBOR, base=base)
