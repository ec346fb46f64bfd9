"""tomkit watch (checker/stream/watch.py, follow.py): verdicts while the log grows,
rotation followed, truncation refused, and restarts after kill -9 at random points
that lose nothing and write no verdict twice."""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options, properties
from tomkit.checker.stream.follow import FollowError
from tomkit.checker.stream.watch import Watch
from tomkit.traces.generate import faulty_trace
from tomkit.traces.jsonl import encode_record

DEFAULT = [p for p in properties().values() if p.default]


def lines_of(recs: list[dict]) -> list[str]:
    return [encode_record(r) + "\n" for r in recs]


def outcomes(report) -> dict:
    return {o.trace: ({k: str(v) for k, v in o.verdicts.items()},
                      {k: r.to_dict() for k, r in o.results.items()})
            for o in report.outcomes}


def test_a_violation_is_reported_before_the_log_is_complete(tmp_path):
    recs, _ = faulty_trace("t1", "swap", seed=1, n_messages=30)
    lines = lines_of(recs)
    path = tmp_path / "a.jsonl"
    out = io.StringIO()
    w = Watch([str(path)], DEFAULT, Options(), out=out)
    assert w.cycle() == 0  # no file yet: nothing read, no error
    cut = len(lines) * 2 // 3  # past the planted swap (at about half of the run)
    path.write_text("".join(lines[:cut]) + lines[cut][:5])  # and half a line
    w.cycle()
    early = out.getvalue()
    assert "total-order-weak violated" in early
    with open(path, "a") as f:
        f.write(lines[cut][5:] + "".join(lines[cut + 1:]))
    w.cycle()
    report = w.finish()
    assert outcomes(report) == outcomes(check_paths([path], DEFAULT, Options()))
    assert report.exit_code() == 1
    assert out.getvalue().count("total-order-weak violated") == 1  # once, early


def test_rotation_is_followed_and_truncation_refused(tmp_path):
    a, _ = faulty_trace("ta", "swap", seed=2, n_messages=20)
    b, _ = faulty_trace("tb", "swap", seed=3, n_messages=20)
    path = tmp_path / "log.jsonl"
    path.write_text("".join(lines_of(a)[:50]))
    out = io.StringIO()
    w = Watch([str(path)], DEFAULT, Options(), out=out)
    w.cycle()
    with open(path, "a") as f:  # the rest, then the log is rotated
        f.write("".join(lines_of(a)[50:]))
    os.rename(path, tmp_path / "log.jsonl.1")
    path.write_text("".join(lines_of(b)))
    w.cycle()
    report = w.finish()
    assert sorted(o.trace for o in report.outcomes) == ["ta", "tb"]
    assert report.files[0].accepted == len(a) + len(b)
    whole = check_paths([tmp_path / "log.jsonl.1"], DEFAULT, Options())
    mine = {o.trace: o for o in report.outcomes}
    assert mine["ta"].verdicts == whole.outcomes[0].verdicts
    # the new file's records are located as the rotation they came from
    assert "(rotation 1)" in json.dumps(
        [r.to_dict() for r in mine["tb"].results.values()])

    w2 = Watch([str(path)], DEFAULT, Options(), out=io.StringIO())
    w2.cycle()
    path.write_text(lines_of(b)[0])  # shorter than what was read
    with pytest.raises(FollowError, match="truncated"):
        w2.cycle()


def test_a_restart_refuses_a_replaced_file(tmp_path):
    a, _ = faulty_trace("ta", "swap", seed=2, n_messages=10)
    path, state = tmp_path / "log.jsonl", tmp_path / "state"
    path.write_text("".join(lines_of(a)))
    w = Watch([str(path)], DEFAULT, Options(), out=io.StringIO(), state_dir=str(state))
    w.cycle()
    w.checkpoint()
    os.remove(path)
    path.write_text("".join(lines_of(a)))  # another inode
    w2 = Watch([str(path)], DEFAULT, Options(), out=io.StringIO(), state_dir=str(state))
    with pytest.raises(FollowError, match="rotated or replaced"):
        w2.cycle()


def watch_cmd(path, state, out) -> list[str]:
    return [sys.executable, "-m", "tomkit", "watch", str(path), "--state", str(state),
            "--out", str(out), "--format", "json", "--idle-exit", "1.5", "--poll", "0.02",
            "--summary-every", "0"]


def test_kill_9_at_random_points_loses_nothing_and_judges_nothing_twice(tmp_path):
    # three traces with planted faults, appended in slices while watch runs; watch is
    # killed at random moments and restarted on the same state until it ends by itself
    recs = []
    for i, fault in enumerate(("swap", "duplicate-delivery", "gap")):
        r, _ = faulty_trace(f"t{i}", fault, seed=i, n_messages=40)
        recs += r
    lines = lines_of(recs)
    path, state, out = tmp_path / "log.jsonl", tmp_path / "state", tmp_path / "v.jsonl"
    rng = random.Random(7)
    written, kills, code = 0, 0, None
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        proc = subprocess.Popen(watch_cmd(path, state, out), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        alive_until = time.monotonic() + rng.uniform(0.3, 2.0)
        while time.monotonic() < alive_until and proc.poll() is None:
            if written < len(lines):
                k = rng.randint(1, 60)
                with open(path, "a") as f:
                    f.write("".join(lines[written:written + k]))
                written += k
            time.sleep(rng.uniform(0.0, 0.1))
        if proc.poll() is None and (written < len(lines) or kills < 4):
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
            continue
        code = proc.wait(timeout=120)
        break
    assert code is not None, "watch did not finish in time"
    assert kills >= 1
    assert written >= len(lines)
    got = [json.loads(x) for x in out.read_text().splitlines()]
    keys = [(g["trace"], g["property"]) for g in got]
    assert len(keys) == len(set(keys)), "a verdict written twice"
    whole = check_paths([path], DEFAULT, Options())
    want = {(o.trace, n) for o in whole.outcomes for n, r in o.results.items()
            if str(r.verdict) == "violated"}
    assert set(keys) == want
    assert code == whole.exit_code() == 1


def test_a_trace_with_views_is_judged_while_it_grows(tmp_path):
    recs, _ = faulty_trace("tv", "swap", seed=4, n_messages=30, views=True)
    assert any(r["kind"] == "view" for r in recs)
    lines = lines_of(recs)
    path = tmp_path / "v.jsonl"
    out = io.StringIO()
    w = Watch([str(path)], DEFAULT, Options(), out=out)
    path.write_text("".join(lines[:len(lines) * 3 // 4]))
    w.cycle()
    assert "total-order-weak violated" in out.getvalue()
    with open(path, "a") as f:
        f.write("".join(lines[len(lines) * 3 // 4:]))
    w.cycle()
    report = w.finish()
    assert outcomes(report) == outcomes(check_paths([path], DEFAULT, Options()))


@pytest.mark.record
def test_record_watch_follows_a_live_etcd_run(tmp_path, capfd):
    from dataclasses import replace

    import tomkit.record.__main__ as record_main
    from tomkit.record.etcd import recorder

    why = recorder.available()
    if why:
        pytest.skip(f"etcd cannot run here: {why}")
    saved = dict(recorder.RUNS)
    recorder.RUNS["clean"] = replace(recorder.RUNS["clean"], messages=8)
    try:
        assert record_main.main(["etcd", "--run", "clean", "--out", str(tmp_path),
                                 "--watch", "--timeout", "120"]) == 0
    finally:
        recorder.RUNS.clear()
        recorder.RUNS.update(saved)
    out = capfd.readouterr().out
    assert "watch: exit 0" in out  # etcd keeps its order; watch read the run live
    live = tmp_path / "etcd-clean-s1.live.jsonl"
    assert live.stat().st_size > 0


def test_a_trace_rejected_by_its_seq_is_reported_as_check_does(tmp_path):
    recs, _ = faulty_trace("tb", "swap", seed=5, n_messages=10)
    good, _ = faulty_trace("tg", "swap", seed=6, n_messages=10)
    count: dict[str, int] = {}
    for r in recs:
        count[r["process"]] = count.get(r["process"], 0) + 1
        r["seq"] = min(count[r["process"]], 3)  # p repeats seq 3: bad input
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines_of(recs + good)))
    w = Watch([str(path)], DEFAULT, Options(), out=io.StringIO(), keep_going=True)
    w.cycle()
    report = w.finish()
    whole = check_paths([path], DEFAULT, Options(), keep_going=True)
    assert outcomes(report) == outcomes(whole)
    assert report.n_rejected == whole.n_rejected > 0
    assert report.exit_code() == whole.exit_code()
