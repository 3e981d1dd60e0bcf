"""What a Claw-Eval grader prints is kept with its grade, per thread, while everything else prints as before."""

from __future__ import annotations

import threading

import pytest

from coworkenv.harness.claw_eval.grading_checkout import _captured


def test_each_grading_thread_keeps_what_it_prints_and_other_output_goes_through(
    capsys: pytest.CaptureFixture[str],
) -> None:
    kept: dict[str, str] = {}
    inside = threading.Barrier(3, timeout=10)

    def grade(name: str) -> None:
        with _captured() as printed:
            print(f"[grader] {name} before")
            inside.wait()  # both graders and the main thread print while both captures are open
            inside.wait()
            print(f"[grader] {name} after")
        kept[name] = printed.getvalue()

    threads = [threading.Thread(target=grade, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    inside.wait()
    print("progress line")
    inside.wait()
    for t in threads:
        t.join(timeout=10)
    assert kept == {"a": "[grader] a before\n[grader] a after\n", "b": "[grader] b before\n[grader] b after\n"}
    out = capsys.readouterr().out
    assert "progress line" in out and "[grader]" not in out
    print("after the graders")
    assert capsys.readouterr().out == "after the graders\n"
