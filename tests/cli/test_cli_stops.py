"""Ctrl-C and SIGTERM at a random point (seeded) of ``tomkit watch --out`` and ``tomkit
tlc``, in this process: the command ends with its documented exit code (130, 143),
leaves no half-written output (or says what it left), and no child process alive. The
runs with a real JVM (TLC, Spark) and a live recorder are in test_cli_stops_jvm.py and
tests/record/test_record_live_stop.py."""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time

import pytest
from cli_run import run

import tomkit.checker.stream.watch as watch_module

pytestmark = pytest.mark.usefixtures("sigterm_as_ctrl_c")

SIGNALS = [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")]


def disordered(traces: int) -> str:
    """``traces`` traces, each delivered in two orders (total order violated)."""
    lines = []
    for i in range(traces):
        for p, order in (("p0", ("a", "b")), ("p1", ("b", "a"))):
            lines += [json.dumps({"trace": f"t{i}", "process": p, "kind": "send", "msg": m})
                      for m in order if p == "p0"]
            lines += [json.dumps({"trace": f"t{i}", "process": p, "kind": "deliver",
                                  "msg": m}) for m in order]
    return "\n".join(lines) + "\n"


class CountedOut:
    """The --out file, whose ``at``-th write first raises ``sig`` in this process (a
    verdict's text, or the newline print writes after it: the line cut in two before)."""

    def __init__(self, f, sig: int, at: int) -> None:
        self.f, self.sig, self.at, self.writes = f, sig, at, 0

    def write(self, s: str) -> int:
        self.writes += 1
        if self.writes == self.at:
            signal.raise_signal(self.sig)
        return self.f.write(s)

    def __getattr__(self, name: str):
        return getattr(self.f, name)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("sig, code, said", SIGNALS)
def test_watch_out_stopped_at_a_random_write_keeps_whole_lines(
        capsys, monkeypatch, tmp_path, sig, code, said, seed):
    log = tmp_path / "run.jsonl"
    log.write_text(disordered(4))
    whole = tmp_path / "whole.txt"
    assert run(capsys, "watch", log, "--idle-exit", "0", "--out", whole)[0] == 1
    lines = whole.read_text().splitlines(keepends=True)
    verdicts = [i for i, line in enumerate(lines) if not line.startswith(" ")]
    assert len(verdicts) >= 8  # two properties or more a trace
    at = random.Random(seed).randint(1, 2 * len(verdicts))  # print writes twice a verdict
    real_open = open
    monkeypatch.setattr(watch_module, "open", lambda *a, **k: CountedOut(
        real_open(*a, **k), sig, at), raising=False)
    out = tmp_path / "out.txt"
    got, _, err = run(capsys, "watch", log, "--idle-exit", "0", "--out", out)
    assert got == code, (seed, at, err)
    assert err.splitlines()[-1] == f"tomkit watch: {said}", (seed, at)
    # the verdicts written before the stop, whole: the one under way is finished
    kept = (at + 1) // 2
    cut = verdicts[kept] if kept < len(verdicts) else len(lines)
    assert out.read_text() == "".join(lines[:cut]), (seed, at)


STAND_IN = ("import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
            "time.sleep(600)")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"time.sleep(600)" in f.read()
    except OSError:
        return False


@pytest.mark.parametrize("sig, code, said", SIGNALS)
def test_tlc_stopped_while_its_jvm_runs_stops_it(capsys, monkeypatch, tmp_path, sig, code,
                                                 said):
    """TLC's JVM stood in for by a process that sleeps (no JVM start); the signal comes
    at a random moment (seeded) once it runs."""
    import tomkit.fuzz.tlc.runner as runner

    try:
        runner.find_jar(), runner.find_java()
    except runner.TlcSetupError as e:
        pytest.skip(str(e))
    pid_file = tmp_path / "pid"
    monkeypatch.setattr(runner, "tlc_command", lambda *a, **k: [
        sys.executable, "-c", STAND_IN, str(pid_file)])
    delay = random.Random(sig).uniform(0.0, 0.3)

    def stop() -> None:
        deadline = time.monotonic() + 120
        while not (pid_file.exists() and pid_file.read_text()) and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(delay)
        os.kill(os.getpid(), sig)

    stopper = threading.Thread(target=stop, daemon=True)
    stopper.start()
    spec = tmp_path / "Tick.tla"
    spec.write_text("---- MODULE Tick ----\nVARIABLE x\nInit == x = 0\nNext == x' = x\n====\n")
    (tmp_path / "Tick.cfg").write_text("INIT Init\nNEXT Next\n")
    out = tmp_path / "tlc-out"
    got, stdout, err = run(capsys, "tlc", spec, "-q", "--out", out)
    stopper.join(5)
    assert got == code and stdout == "", err
    assert err.splitlines()[-2:] == [
        f"tomkit tlc: {said}",
        f"tomkit tlc: nothing written to {out}: stopped before TLC finished (its JVM was "
        "stopped too)"]
    assert not out.exists() and not alive(int(pid_file.read_text()))
