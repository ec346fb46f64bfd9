"""Latency bounds in the single pass (checker/stream/canon.py: each message's largest
latency, folded as it retires) and in ``tomkit watch`` (printed once a latency exceeds
the bound, pending until then): the whole-trace checker's verdicts, witnesses and
sentences on timed runs, in both layouts, with windows small enough that messages
retire before the end."""

from __future__ import annotations

import io
import json

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import agree, merge, outcomes, small_windows

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options, properties
from tomkit.checker.stream.driver import _Run
from tomkit.checker.stream.watch import Watch
from tomkit.traces.generate import faulty_trace
from tomkit.traces.writer import write_records

PROPS = [properties()[n] for n in ("integrity", "total-order-weak", "latency",
                                   "realtime-latency")]






@pytest.mark.parametrize("seed", range(3))
def test_the_slow_fault_and_its_bound(seed, monkeypatch, tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 16)
    recs, truth = faulty_trace("t", "slow", seed=seed, n_messages=40)
    path = tmp_path / "s.jsonl"
    write_records(path, recs)
    bound = truth["bound"]
    for b, over in ((bound, True), (1e9, False)):
        run = _Run(PROPS, Options(latency_bound=b), False)
        agree([path], PROPS, Options(latency_bound=b), run)
        # within the bound and over it: decided in the pass (the slowest delivery and
        # the statistics of every latency kept as messages retire)
        assert run.modes == {"fast": 1} and not run.whole, over


@st.composite
def timed_runs(draw):
    """Sends, then every process delivering them in one order, with local and real times
    (now and then missing), the records in a random interleaving."""
    procs = [f"p{i}" for i in range(draw(st.integers(1, 4)))]
    n = draw(st.integers(1, 12))
    local: dict[str, list[dict]] = {p: [] for p in procs}
    sent_at = {}
    for i in range(n):
        s = draw(st.sampled_from(procs))
        t = float(i)
        sent_at[f"m{i}"] = t
        rec = {"process": s, "kind": "send", "msg": f"m{i}"}
        if draw(st.integers(0, 9)):
            rec["time"] = t
        if draw(st.booleans()):
            rec["real_time"] = t + 0.25
        local[s].append(rec)
    for p in procs:
        for i in range(draw(st.integers(0, n))):
            m = f"m{i}"
            rec = {"process": p, "kind": "deliver", "msg": m}
            delay = draw(st.sampled_from([0.5, 1.0, 1.5, 3.0, -0.5]))
            if draw(st.integers(0, 9)):
                rec["time"] = sent_at[m] + delay
            if draw(st.booleans()):
                rec["real_time"] = sent_at[m] + delay + draw(st.sampled_from([0.0, 1.0]))
            local[p].append(rec)
    return merge(draw, {p: local[p] for p in procs})


@given(timed_runs(), st.sampled_from([2, 4, 1 << 18]), st.sampled_from([4, 1 << 16]),
       st.booleans(), st.sampled_from([None, 1.0, 2.0, 5.0]),
       st.sampled_from([None, 1.2, 4.0]))
@settings(max_examples=examples(50), deadline=None, suppress_health_check=list(HealthCheck))
def test_hypothesis_timed_runs_agree(tmp_path_factory, records, trim, rows, grouped, bound,
                                     rbound):
    if not records:
        return
    with small_windows(trim, rows):
        path = tmp_path_factory.mktemp("l") / "t.jsonl"
        write_records(path, sorted(records, key=lambda r: r["process"]) if grouped
                      else records)
        agree([path], PROPS, Options(latency_bound=bound, realtime_bound=rbound))


def test_watch_prints_a_latency_breach_while_the_log_grows(tmp_path):
    recs, truth = faulty_trace("tl", "slow", seed=2, n_messages=40)
    lines = [json.dumps(r) + "\n" for r in recs]
    path = tmp_path / "l.jsonl"
    out = io.StringIO()
    props = [properties()["integrity"], properties()["latency"]]
    options = Options(latency_bound=truth["bound"])
    w = Watch([str(path)], props, options, fmt="json", out=out)
    # up to the slow delivery: pending; with it, printed
    slow = next(i for i, r in enumerate(recs) if r["kind"] == "deliver" and
                r["msg"] == truth["messages"][0] and r["process"] in truth["processes"])
    path.write_text("".join(lines[:slow]))
    w.cycle()
    assert out.getvalue() == ""
    assert w.pending()["verdicts"] == 1
    with open(path, "a") as f:
        f.write(lines[slow])
    w.cycle()
    got = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [(g["property"], g["verdict"]) for g in got] == [("latency", "violated")]
    assert truth["messages"][0] in got[0]["explanation"]
    assert w.pending()["verdicts"] == 0
    with open(path, "a") as f:
        f.write("".join(lines[slow + 1:]))
    w.cycle()
    report = w.finish()
    assert outcomes(report) == outcomes(check_paths([path], props, options))
    assert len(out.getvalue().splitlines()) == 1  # not printed again at the end
