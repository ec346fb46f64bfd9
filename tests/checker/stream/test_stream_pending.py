"""tomkit watch's pending verdicts: end-of-trace properties (agreement, validity,
liveness) pending while the log grows and decided as tomkit check decides them at the
end; --timeout prints a message not yet delivered as overdue (a notice, never a
verdict), once, and a run that delivers it in the end holds."""

from __future__ import annotations

import io
import json
import time

import pytest

from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options, properties
from tomkit.checker.stream.watch import Watch
from tomkit.traces.generate import clean_trace, faulty_trace
from tomkit.traces.jsonl import encode_record

LIVE = [properties()[n] for n in ("integrity", "total-order-weak", "agreement", "validity",
                                  "liveness")]


def outcomes(report) -> dict:
    return {o.trace: ({k: str(v) for k, v in o.verdicts.items()},
                      {k: r.to_dict() for k, r in o.results.items()})
            for o in report.outcomes}


def write(path, recs, mode="a"):
    with open(path, mode) as f:
        f.write("".join(encode_record(r) + "\n" for r in recs))


@pytest.mark.parametrize("fault", ["lost", "uniform", "swap", None])
def test_end_of_trace_verdicts_are_check_s(tmp_path, fault):
    if fault is None:
        recs = clean_trace("t", n_processes=4, n_messages=40, seed=4)
    else:
        recs, _ = faulty_trace("t", fault, seed=4, n_messages=40)
    path = tmp_path / "a.jsonl"
    out = io.StringIO()
    w = Watch([str(path)], LIVE, Options(), out=out, fmt="json")
    pending = []
    for k in range(4):
        write(path, recs[len(recs) * k // 4:len(recs) * (k + 1) // 4])
        w.cycle()
        pending.append(w.pending())
    before = [json.loads(ln) for ln in out.getvalue().splitlines()]
    report = w.finish()
    want = check_paths([path], LIVE, Options())
    assert outcomes(report) == outcomes(want)
    assert report.exit_code() == want.exit_code()
    assert all(p["verdicts"] == 3 for p in pending)  # one open trace, three properties
    # no end-of-trace verdict is printed before the end; the order ones may be
    assert not any(v["property"] in ("agreement", "validity", "liveness") for v in before)
    if fault == "swap":
        assert before


def test_pending_messages_count_down_and_the_summary_shows_them(tmp_path):
    path = tmp_path / "a.jsonl"
    w = Watch([str(path)], LIVE, Options(), out=io.StringIO())
    write(path, [{"trace": "t", "process": p, "kind": "send", "msg": f"m{i}"}
                 for i, p in enumerate(["p1", "p2", "p3"])])
    w.cycle()
    assert w.pending()["messages"] == 3  # sent, delivered by no one
    write(path, [{"trace": "t", "process": p, "kind": "deliver", "msg": f"m{i}"}
                 for p in ("p1", "p2") for i in range(3)])
    w.cycle()
    assert w.pending()["messages"] == 3  # p3 has delivered none of them
    write(path, [{"trace": "t", "process": "p3", "kind": "deliver", "msg": f"m{i}"}
                 for i in range(2)])
    w.cycle()
    assert w.pending()["messages"] == 1
    assert "pending: 3 end-of-trace verdicts, 1 messages" in w.summary()
    write(path, [{"trace": "t", "process": "p3", "kind": "deliver", "msg": "m2"}])
    w.cycle()
    assert w.pending()["messages"] == 0
    assert w.finish().exit_code() == 0


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_timeout_prints_an_overdue_message_once_and_no_false_alarm(tmp_path, fmt):
    path = tmp_path / "a.jsonl"
    out = io.StringIO()
    w = Watch([str(path)], LIVE, Options(), out=out, fmt=fmt, timeout=0.2)
    write(path, [{"trace": "t", "process": "p1", "kind": "send", "msg": "m0"},
                 {"trace": "t", "process": "p1", "kind": "deliver", "msg": "m0"},
                 {"trace": "t", "process": "p2", "kind": "deliver", "msg": "m0"},
                 {"trace": "t", "process": "p3", "kind": "send", "msg": "m1"}])
    w.cycle()
    assert out.getvalue() == ""  # nothing is overdue yet
    deadline = time.monotonic() + 60
    while "m0" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.3)
        w.cycle()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1  # one line a trace at a time, its oldest message
    if fmt == "json":
        d = json.loads(lines[0])
        assert d["type"] == "overdue" and d["msg"] == "m0" and d["missing"] == ["p3"]
        assert d["seconds"] >= 0.2
    else:
        assert "m0 overdue: not delivered by p3" in lines[0] and "not a verdict" in lines[0]
    time.sleep(0.3)
    w.cycle()
    assert len(out.getvalue().splitlines()) == 1  # m0 is not printed again
    # m0 delivered everywhere: the next oldest (m1, delivered by no one) comes next
    write(path, [{"trace": "t", "process": "p3", "kind": "deliver", "msg": "m0"}])
    while "m1" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.3)
        w.cycle()
    assert "m1" in out.getvalue().splitlines()[-1]
    write(path, [{"trace": "t", "process": p, "kind": "deliver", "msg": "m1"}
                 for p in ("p1", "p2", "p3")])
    w.cycle()
    report = w.finish()
    # the run delivered everything in the end: the notices were no verdicts
    assert report.exit_code() == 0
    assert outcomes(report) == outcomes(check_paths([path], LIVE, Options()))
    assert not any("violated" in ln for ln in out.getvalue().splitlines())
