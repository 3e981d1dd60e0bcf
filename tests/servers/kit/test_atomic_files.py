"""The kit's atomic writer: a target is old or new, never torn; a dead writer's temporary files are cleaned, a
live one's are left; ``serve --reset`` clears what a killed reset left beside its database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coworkenv.servers.kit import atomic
from coworkenv.servers.kit.state import ServiceState
from coworkenv.servers.registry import get_service


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_failure_while_writing_leaves_the_old_file_whole_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="disk full"), atomic.atomic_open(target) as handle:
        handle.write("new, but only half of it")
        raise RuntimeError("disk full")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_disk_that_fills_up_before_a_new_file_is_complete_leaves_nothing_at_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        atomic.write_atomic(tmp_path / "new.jsonl", "a line\n" * 1000)
    assert list(tmp_path.iterdir()) == []


def test_a_whole_write_replaces_the_file_with_the_usual_permissions(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    atomic.write_atomic(target, "new ✓\n")
    assert target.read_text(encoding="utf-8") == "new ✓\n" and list(tmp_path.iterdir()) == [target]
    plain = tmp_path / "plain"
    plain.write_text("")
    assert target.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777


def test_only_the_temporary_files_of_writers_that_are_gone_are_removed(tmp_path: Path) -> None:
    dead = tmp_path / f".out.json.{dead_pid()}.abcd1234.tmp"
    live = tmp_path / f".out.json.{os.getpid()}.efgh5678.tmp"
    other = tmp_path / "out.json.tmp"  # not ours: no writer id
    for path in (dead, live, other):
        path.write_text("partial")
    assert atomic.remove_temp_files(tmp_path, "out.json") == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])


def test_serve_reset_removes_the_temporary_database_a_killed_reset_left(tmp_path: Path) -> None:
    db = tmp_path / "tickets.db"
    ServiceState.open(get_service("tickets"), {}, path=db).close()
    left = tmp_path / f".tickets.db.{dead_pid()}.k1ll3d00.tmp"
    running = tmp_path / f".tickets.db.{os.getpid()}.running0.tmp"  # another reset, still at work
    for path in (left, Path(f"{left}-wal"), Path(f"{left}-shm"), running):
        path.write_bytes(b"\0" * 4096)
    seed = Path(__file__).parents[3] / "servers" / "examples" / "tickets.json"
    serve = [sys.executable, "-m", "coworkenv.servers", "serve", "tickets", "--db", str(db), "--reset", "--seed"]
    done = subprocess.run([*serve, str(seed)], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))) == sorted(
        [db.name, running.name]
    )
    assert not Path(f"{left}-wal").exists() and not Path(f"{left}-shm").exists()


def test_a_torn_last_json_line_is_counted_and_a_torn_middle_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"b": 2}\n{"c": ')
    found = atomic.read_json_lines(path)
    assert [value for _, _, value in found.lines] == [{"a": 1}, {"b": 2}]
    assert (found.good, found.torn, found.torn_line) == (19, 6, 4)
    assert "line 4, 6 bytes" in found.torn_note(path)
    path.write_bytes(b'{"a": 1}\n{"b": \n{"c": 3}\n')
    with pytest.raises(ValueError, match=r"log\.jsonl:2: not valid JSON"):
        atomic.read_json_lines(path)


def test_a_file_whose_name_is_already_255_bytes_is_written_and_its_leftovers_found(tmp_path: Path) -> None:
    from coworkenv.servers.kit.atomic import remove_temp_files, temp_beside, write_atomic

    name = "é" * 125 + ".eval"  # 255 bytes in UTF-8
    assert len(name.encode()) == 255
    write_atomic(tmp_path / name, "whole")
    assert (tmp_path / name).read_text() == "whole" and [p.name for p in tmp_path.iterdir()] == [name]
    fd, tmp = temp_beside(tmp_path / name)
    os.close(fd)
    assert len(tmp.name.encode()) <= 255
    assert remove_temp_files(tmp_path, name) == []  # its writer (this process) is alive: left alone
