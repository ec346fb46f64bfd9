"""Latency decided in the single pass, also over the bound and on a broken trace
(checker/stream/latencies.py, canon.py's tally, reduced.py's combination): the
whole-trace checker's verdicts, witnesses, sentences and details (count, unmeasured,
mean, maximum, slowest, per process) on timed runs with a breach early, in the middle
and late, ties at the maximum, unmeasured deliveries, deliveries read before their
sends, reused ids, real time, both layouts (grouped by process: the lag read from disk,
the sends awaited), the generators' faults with the held records spilled, and windows of
a few positions so that the retired prefix carries most of the latencies; each asserts
the pass decided (not the whole-trace engine)."""

from __future__ import annotations

import math
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import agree, by_process, small_windows

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.spill as spill
from tomkit.checker.check_run import plan
from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options, properties
from tomkit.checker.stream.driver import _Run
from tomkit.checker.stream.latencies import Tally, exact_sums, value
from tomkit.traces.generate import FAULTS, LATENCY_BOUND, faulty_trace
from tomkit.traces.long_trace import long_trace_tables
from tomkit.traces.writer import TraceWriter, write_records

PROPS = [properties()[n] for n in ("integrity", "total-order-weak", "latency",
                                   "realtime-latency")]
N = 60


def timed(n=N, procs=4, slow=(), tie=False, untimed=(), early=(), swap=None,
          resend=None, seed=0, senders=None) -> list[dict]:
    """n messages, each delivered by every process in one order, with local and real
    times; ``slow``: (message, process, extra delay) of slow deliveries; ``tie``: the
    first slow delivery's message also as slow at every other process; ``untimed``:
    messages whose send logs no time; ``early``: messages each process but the sender
    delivers before the send in the file; ``swap``: (process, k) swaps its deliveries
    k and k + 1; ``resend``: (message, process) sends the id again, earlier on the
    clock, right after its first send."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(procs)]
    senders = senders or names
    keyed = []
    delay = {(i, p): rng.choice([0.5, 1.0, 1.25]) for i in range(n) for p in names}
    for i, p, extra in slow:
        delay[i, p] += extra
        if tie:
            for q in names:
                delay[i, q] = delay[i, p]
    for i in range(n):
        s = senders[i % len(senders)]
        rec = {"process": s, "kind": "send", "msg": f"m{i}", "real_time": i + 0.1}
        if i not in untimed:
            rec["time"] = float(i)
        keyed.append((i, rec))
        if resend is not None and resend[0] == i:
            keyed.append((i + 0.1, {"process": resend[1], "kind": "send", "msg": f"m{i}",
                                    "time": i - 0.5, "real_time": i - 0.4}))
        for p in names:
            t = i + delay[i, p]
            d = {"process": p, "kind": "deliver", "msg": f"m{i}", "time": t,
                 "real_time": t + 0.1}
            if (i * 7 + len(p)) % 11 == 0:  # now and then a delivery without its time
                del d["time"]
            keyed.append((i - 0.5 if i in early and p != s else i + 0.5, d))
    keyed.sort(key=lambda kr: kr[0])
    out = [dict(r, trace="t") for _, r in keyed]
    if swap is not None:
        p, k = swap
        at = [j for j, r in enumerate(out) if r["process"] == p and r["kind"] == "deliver"]
        a, b = at[k], at[k + 1]
        out[a], out[b] = out[b], out[a]
    return out


@pytest.fixture
def small(monkeypatch):
    """A window of 4 positions read 16 records at a time: most messages retire."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 16)


def decided(tmp_path, records, options, grouped=False, props=PROPS) -> _Run:
    """The single pass's report is the whole-trace checker's, and the latency properties
    send the trace to the whole-trace engine no more often than the order properties
    alone do (a break after a process lagged behind the retired prefix goes whole for
    them too: docs/stream.md)."""
    path = tmp_path / ("g.jsonl" if grouped else "i.jsonl")
    write_records(path, by_process(records) if grouped else records)
    run = _Run(props, options, False)
    agree([path], props, options, run)
    alone = _Run(props[:2], options, False)
    agree([path], props[:2], options, alone)
    assert bool(run.whole) == bool(alone.whole), "latency sent the trace whole"
    if not grouped and not alone.whole:
        assert not run.whole, "decided by the whole-trace engine"
    return run


BOUND = Options(latency_bound=3.0, realtime_bound=3.0)


@pytest.mark.parametrize("where", [2, N // 2, N - 2])
@pytest.mark.parametrize("grouped", [False, True])
def test_a_breach_early_middle_late_is_decided_in_the_pass(where, grouped, small, tmp_path):
    recs = timed(slow=[(where, "p2", 5.0)])
    run = decided(tmp_path, recs, BOUND, grouped)
    assert run.modes == {"fast": 1} and run.peak_window < N
    report = check_paths([tmp_path / ("g.jsonl" if grouped else "i.jsonl")], PROPS, BOUND)
    res = report.outcomes[0].results["latency"]
    assert res.witness[1].msg == f"m{where}" and res.details["deliveries"] > 0


@pytest.mark.parametrize("slowest", [
    {("m5", "p1"), ("m40", "p1")},  # one process twice: its later delivery
    {("m5", "p1"), ("m58", "p1")},  # the same, retired and in the window
    {("m5", "p3"), ("m40", "p1")},  # the last process by name, though retired
    {("m40", "p1"), ("m41", "p3"), ("m41", "p0")},  # in the window
    {("m3", "p0"), ("m4", "p0"), ("m6", "p2"), ("m6", "p1")},  # all retired
])
def test_ties_at_the_maximum(slowest, small, tmp_path):
    recs = timed()
    for r in recs:  # latencies of exactly 1 s, and 5 s for the chosen deliveries
        if r["kind"] == "deliver" and "time" in r:
            r["time"] = int(r["msg"][1:]) + (5.0 if (r["msg"], r["process"]) in slowest
                                             else 1.0)
    run = decided(tmp_path, recs, BOUND)
    assert run.modes == {"fast": 1}
    decided(tmp_path, recs, Options(latency_bound=100.0))


def test_unmeasured_deliveries_and_sends_without_time(small, tmp_path):
    recs = timed(slow=[(30, "p0", 4.0)], untimed=(3, 29, 30, 31))
    decided(tmp_path, recs, BOUND)
    for r in recs:  # no local time at all: unknown, with the reason
        r.pop("time", None)
    decided(tmp_path, recs, BOUND)


def test_deliveries_read_before_their_sends(small, tmp_path):
    recs = timed(slow=[(20, "p3", 6.0)], early=(1, 2, 20, 21, N - 1))
    decided(tmp_path, recs, BOUND)


def test_one_sender_grouped_reads_the_lag_from_disk(small, tmp_path):
    # p0 sends everything, its records first: the others' deliveries lag behind the
    # retired prefix and are measured against the retired send times on disk
    recs = timed(slow=[(7, "p2", 5.0), (50, "p1", 2.0)], senders=["p0"])
    run = decided(tmp_path, recs, BOUND, grouped=True)
    assert run.modes == {"fast": 1} and run.peak_window < N


@pytest.mark.parametrize("breach", [5, N - 5])
@pytest.mark.parametrize("grouped", [False, True])
def test_broken_traces_combine_the_retired_part_and_the_held_records(breach, grouped, small,
                                                                      tmp_path):
    # p1's deliveries 40 and 41 swapped: the order breaks after positions retired; the
    # slowest delivery lies in the retired part (5) or among the held records (55)
    recs = timed(slow=[(breach, "p2", 5.0), (breach + 1, "p0", 2.5)], swap=("p1", 40))
    run = decided(tmp_path, recs, BOUND, grouped)
    if not grouped:
        assert run.modes == {"slow": 1}


def test_a_reused_id_among_the_held_records(small, tmp_path):
    # m50 sent again by p3, earlier on the clock: its first send is p3's, the sentence
    # names it, and the trace breaks (an id sent twice) after positions retired
    recs = timed(slow=[(50, "p1", 1.5), (10, "p2", 4.2)], resend=(50, "p3"))
    run = decided(tmp_path, recs, BOUND)
    assert run.modes == {"slow": 1}
    decided(tmp_path, recs, Options(latency_bound=100.0))


def test_a_broken_trace_within_the_bound(small, tmp_path):
    recs = timed(swap=("p0", 30))
    run = decided(tmp_path, recs, Options(latency_bound=100.0, realtime_bound=100.0))
    assert run.modes == {"slow": 1}


def test_exact_sums_are_fsum():
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(0, 1, 300) * 10.0 ** rng.integers(-300, 300, 300),
                        [1e16, 1.0, -1e16, 5e-324, -5e-324, 0.0, 1.7e308]])
    g = rng.integers(0, 3, len(x))
    sums = exact_sums(x, g, 3)
    for k in range(3):
        assert value(sums[k]) == math.fsum(x[g == k].tolist())
    # split in pieces and merged: the same
    a, b = Tally(), Tally()
    names = ["p0", "p1", "p2"]
    for t, part in ((a, slice(0, 150)), (b, slice(150, None))):
        t.add(x[part], g[part], names, np.arange(len(x))[part],
              lambda r: None)  # noqa: ARG005 (never the slowest here: see below)
    both = a.merge(b)
    for k, p in enumerate(names):
        assert value(both.per[p][1]) == math.fsum(x[g == k].tolist())


@st.composite
def runs(draw):
    n = draw(st.integers(2, 30))
    slow = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(["p0", "p1", "p2"]),
                                   st.sampled_from([1.0, 2.5, 4.0])), max_size=3))
    swap = draw(st.one_of(st.none(), st.tuples(st.sampled_from(["p0", "p1"]),
                                               st.integers(0, n - 2))))
    early = draw(st.lists(st.integers(0, n - 1), max_size=3))
    return timed(n, 3, slow=slow, swap=swap, early=tuple(early),
                 tie=draw(st.booleans()), seed=draw(st.integers(0, 3)))


@given(runs(), st.booleans(), st.sampled_from([2, 4]), st.sampled_from([None, 2.0, 4.0]))
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_timed_runs_with_breaks(tmp_path_factory, recs, grouped, trim, bound):
    with small_windows(trim, 8):
        path = tmp_path_factory.mktemp("h") / "t.jsonl"
        write_records(path, by_process(recs) if grouped else recs)
        options = Options(latency_bound=bound)
        run = _Run(PROPS, options, False)
        agree([path], PROPS, options, run)
        if not grouped:
            assert not run.whole


@pytest.mark.parametrize("bound", [0.1, 0.04])
def test_grouped_where_every_process_sends_awaits_the_sends(bound, monkeypatch, tmp_path):
    # p0's records first: its deliveries of the others' messages are read before their
    # sends, and retire before them (canon.py's awaited sends); their latencies wait in
    # ``pend`` and are measured when the sends come (a bound of 0.04 s is broken by
    # deliveries all over the run, 0.1 s by p0's delivery of m2500, made slow)
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    monkeypatch.setattr(driver, "READ_ROWS", 500)
    t = pa.concat_tables(list(long_trace_tables(3000, n_processes=4, seed=2)))
    slow = np.asarray(pc.and_(pc.and_(pc.equal(t.column("process"), "p0"),
                                      pc.equal(t.column("kind"), "deliver")),
                              pc.equal(t.column("msg"), "m2500")))
    times = t.column("time").to_numpy().copy()
    times[slow] += 1.0
    t = t.set_column(t.column_names.index("time"), "time", pa.array(times))
    path = tmp_path / "grouped.parquet"
    with TraceWriter(path) as w:
        for p in ("p0", "p1", "p2", "p3"):
            w.write_table(t.filter(pc.equal(t.column("process"), p)))
    options = Options(latency_bound=bound)
    props = plan(options).properties
    run = _Run(props, options, False)
    agree([path], props, options, run)
    assert run.modes == {"fast": 1} and not run.whole
    assert run.peak_window < 500, run.peak_window  # before: all 3,000 positions


@pytest.mark.parametrize("fault", ["slow", "swap", "gap", "duplicate-delivery",
                                   "unsent-delivery", "causal", "view-mismatch"])
def test_planted_faults_with_a_bound_spilled(fault, small, monkeypatch, tmp_path):
    # the generators' faults (one per kind of break: the others are the differential
    # tests') with a latency bound the slow fault breaks, read 8 records at a time with
    # a window of 4 positions, the held records spilled past 6 records: the whole-trace
    # checker's report, and latency sends no trace whole by itself
    assert fault in FAULTS
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)
    recs, _ = faulty_trace(f"t-{fault}", fault, seed=1, n_messages=20)
    options = Options(latency_bound=LATENCY_BOUND, realtime_bound=LATENCY_BOUND)
    for grouped in (False, True):
        run = decided(tmp_path, recs, options, grouped)
        if fault == "slow" and not grouped:
            assert run.modes == {"fast": 1}


def test_a_checkpoint_from_before_the_latency_tallies_is_refused_in_one_line():
    """A tomkit watch state pickled before latencies.py (a latency clock, no tallies)
    cannot give the statistics a verdict now reports: taking it up says so, and what to
    do, instead of failing later on a missing attribute."""
    import pickle

    old = canon.TraceState("t", clocks=["time"])
    del old.__dict__["tally"]
    with pytest.raises(ValueError, match="older tomkit with a latency bound.*new --state"):
        pickle.loads(pickle.dumps(old))
    fine = canon.TraceState("t", clocks=["time"])
    assert pickle.loads(pickle.dumps(fine)).tally.keys() == {"time"}
