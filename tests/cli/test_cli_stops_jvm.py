"""The real commands whose work runs in a JVM, stopped at a random moment (seeded) once
the JVM runs: ``tomkit tlc`` by Ctrl-C (SIGINT to its process group, as a terminal
sends it), ``tomkit scan`` with Spark by ``kill PID`` (SIGTERM to tomkit alone, which
must stop the JVM itself). Each ends with its exit code, says what became of --out,
and leaves no process of its session alive. One small run each (seconds of JVM start)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

#: a loaded machine starts a JVM slowly; the bound is generous, the assertion is that
#: nothing is left at all
BOUND = 300.0


def session(sid: int) -> list[str]:
    """The live processes of session ``sid`` (zombies left to init are not alive)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:120]
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(f"{entry} {cmd}")
    return found


def java_in(sid: int) -> bool:
    return any(" " in p and "java" in p.split(" ", 1)[1].split(" ", 1)[0]
               for p in session(sid))


def stopped(cmd: list[str], sig: int, to_group: bool, seed: int,
            cwd: str) -> tuple[int, str, float]:
    """Run ``cmd`` in a session of its own, send ``sig`` once its JVM runs and a random
    moment more (seeded) has passed; its exit code, stderr, and the seconds from the
    signal until no process of its session was left."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, start_new_session=True, cwd=cwd)
    try:
        deadline = time.monotonic() + BOUND
        while p.poll() is None and not java_in(p.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert p.poll() is None and java_in(p.pid), p.stderr.read() if p.stderr else ""
        # (a tiny scan ends seconds after its JVM starts: the moment is within the first)
        time.sleep(random.Random(seed).uniform(0.0, 1.0))
        assert p.poll() is None
        (os.killpg if to_group else os.kill)(p.pid, sig)
        sent = time.monotonic()
        _, err = p.communicate(timeout=BOUND)
        while session(p.pid) and time.monotonic() < sent + BOUND:
            time.sleep(0.1)
        assert not session(p.pid), session(p.pid)
        return p.returncode, err, time.monotonic() - sent
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


TOMKIT = [sys.executable, "-m", "tomkit"]


@pytest.mark.tlc
def test_tlc_stopped_by_ctrl_c_stops_its_jvm(tmp_path):
    # a simulation runs until stopped: the signal comes while TLC works
    spec = tmp_path / "Tick.tla"
    spec.write_text("---- MODULE Tick ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\n"
                    "Next == x' = (x + 1) % 4\nTypeOK == x \\in 0..3\n====\n")
    (tmp_path / "Tick.cfg").write_text("INIT Init\nNEXT Next\nINVARIANT TypeOK\n")
    out = tmp_path / "tlc-out"
    code, err, _ = stopped([*TOMKIT, "tlc", str(spec), "--simulate", "--timeout", "600",
                            "-q", "--out", str(out)], signal.SIGINT, True, 1, str(tmp_path))
    assert code == 130, err
    assert err.splitlines()[-2:] == [
        "tomkit tlc: interrupted",
        f"tomkit tlc: nothing written to {out}: stopped before TLC finished (its JVM was "
        "stopped too)"], err
    assert not out.exists()


@pytest.mark.spark
def test_scan_with_spark_stopped_by_sigterm_stops_its_jvm(tmp_path):
    pytest.importorskip("pyspark")
    data = tmp_path / "data"
    data.mkdir()
    (data / "t.jsonl").write_text(
        '{"trace": "t", "process": "p0", "kind": "send", "msg": "m"}\n'
        '{"trace": "t", "process": "p0", "kind": "deliver", "msg": "m"}\n')
    out = tmp_path / "verdicts"
    code, err, seconds = stopped([*TOMKIT, "scan", str(data), "--spark", "--master",
                                  "local[1]", "--out", str(out)], signal.SIGTERM, False, 2,
                                 str(tmp_path))
    assert code == 143, err
    # stopped while the JVM started, it ran on for good (still there after 300 s), and
    # py4j logged a traceback
    assert err.splitlines()[-3:-1] == ["tomkit scan: terminated (SIGTERM)",
                                       "tomkit scan: Spark's JVM, started by this scan, was "
                                       "stopped"], err
    assert err.splitlines()[-1] == \
        f"tomkit scan: {out} not made: a scan replaces it only once complete", err
    assert not out.exists() and "Traceback" not in err
    print(f"the session was empty {seconds:.1f} s after SIGTERM")
