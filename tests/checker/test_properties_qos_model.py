"""The QoS properties on the qos model's own runs (branch qos-model; skipped without it):
no false alarm on a simulated run with a join, a leave, crashes and a recovery, and the
reading aid's B5 joiner, whose literal join window member-liveness catches."""

from __future__ import annotations

import pytest

from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace

pytest.importorskip("tomkit.model.qos.process")


def _verdicts(records, options=Options()):
    t = Trace.from_records(records)
    return {n: properties()[n].check(t, options) for n in
            ("integrity", "total-order-weak", "global-order", "member-liveness",
             "realtime-latency", "rate")}


def test_b5_literal_join_breaks_member_liveness():
    model_tests = pytest.importorskip("test_model_qos")
    _, safe = model_tests.b5_run(None)
    _, literal = model_tests.b5_run("literal-join")
    assert _verdicts(safe.records)["member-liveness"].verdict == Verdict.HOLDS
    res = _verdicts(literal.records)["member-liveness"]
    assert res.verdict == Verdict.VIOLATED
    assert "p2 joined at slot 3, before the send at slot 4" in res.explanation


def test_simulated_run_with_membership_changes(tmp_path):
    from tomkit.cli import main
    from tomkit.traces.reader import read_records

    out = tmp_path / "qos.jsonl"
    code = main(["simulate", "--protocol", "qos", "--n", "5", "--messages", "120",
                 "--rate", "20", "--seed", "2", "--packets", "--joins", "p4@0.3",
                 "--leaves", "p3@0.45", "--crash", "p1@0.5", "--out", str(out), "--quiet"])
    assert code == 0
    recs = list(read_records(out))
    assert any(r["kind"] == "packet" for r in recs) and all("real_time" in r for r in recs)
    v = _verdicts(recs, Options(realtime_bound=0.17 + 1e-9, slot=0.1, rate_max=10 ** 6))
    assert {n: r.verdict for n, r in v.items()} == dict.fromkeys(v, Verdict.HOLDS)
