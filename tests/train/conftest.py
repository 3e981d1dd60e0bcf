"""Train tests run offline: nothing may reach for a model hub. The tiny model is built once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model, built through the ``coworkenv train tiny`` command."""
    pytest.importorskip("trl")
    from click.testing import CliRunner

    from coworkenv.train.commands import train_group

    out = tmp_path_factory.mktemp("tiny") / "model"
    result = CliRunner().invoke(train_group, ["tiny", "--out", str(out), "--seed", "0"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(autouse=True)
def _own_probe_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The curriculum's probe cache of each test is its own, never the user's ~/.cache."""
    monkeypatch.setenv("COWORKENV_PROBE_CACHE", str(tmp_path_factory.mktemp("probe-cache")))
