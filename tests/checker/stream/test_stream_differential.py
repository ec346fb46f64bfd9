"""The single-pass checker (checker/stream/) against the whole-trace checker: the same
verdicts, witnesses and sentences on every planted fault of the generators, on
Hypothesis-made traces, in both file layouts, with the window retired early (a small
TRIM_AT) so that witnesses found on held records have their positions shifted back."""

from __future__ import annotations

import pytest
from budget import SEEDS, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import CORRECT, STREAMED, agree, by_process, merge, small_windows

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.properties import Options, properties
from tomkit.checker.stream.driver import _Run, check_stream, not_streamed
from tomkit.traces.generate import FAULTS, faulty_trace
from tomkit.traces.long_trace import long_trace_tables
from tomkit.traces.writer import TraceWriter, write_records


@pytest.fixture
def small_window(monkeypatch):
    monkeypatch.setattr(canon, "TRIM_AT", 4)




@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_planted_fault_both_layouts(fault, small_window, monkeypatch, tmp_path):
    # 8 records at a time: the first processes' positions retire before the later ones
    # come, which then lag behind the retired prefix (read back from disk, retired.py)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    for seed in SEEDS:
        recs, _ = faulty_trace(f"t-{fault}-{seed}", fault, seed=seed, n_messages=30)
        modes = {}
        for layout, rs in (("interleaved", recs), ("grouped", by_process(recs))):
            path = tmp_path / f"{seed}-{layout}.jsonl"
            write_records(path, rs)
            run = _Run(STREAMED, Options(), False)
            agree([path], run=run)
            agree([path], CORRECT, Options(scope="correct"))
            modes[layout] = run.modes
        if modes["interleaved"] == {"fast": 1}:  # a clean picture stays in the pass
            assert modes["grouped"] == {"fast": 1}


@st.composite
def near_total_order(draw):
    """A run that is mostly a correct total order (sends, then prefixes of one order, in
    a random interleaving), with some of: a swap, a repeat, a gap, an unsent delivery, a
    reused id, a crash."""
    procs = [f"p{i}" for i in range(draw(st.integers(1, 4)))]
    n = draw(st.integers(1, 14))
    order = [f"m{i}" for i in range(n)]
    senders = [draw(st.sampled_from(procs)) for _ in order]
    local: dict[str, list[dict]] = {p: [] for p in procs}
    for m, s in zip(order, senders):
        if draw(st.integers(0, 9)):  # now and then a message is never sent
            local[s].append({"process": s, "kind": "send", "msg": m})
    for p in procs:
        seq = order[:draw(st.integers(0, n))]
        faults = draw(st.lists(st.sampled_from(["swap", "repeat", "gap", "none"]),
                               max_size=2))
        for f in faults:
            if len(seq) >= 2 and f == "swap":
                i = draw(st.integers(0, len(seq) - 2))
                seq[i], seq[i + 1] = seq[i + 1], seq[i]
            elif seq and f == "repeat":
                seq.append(draw(st.sampled_from(seq)))
            elif len(seq) >= 2 and f == "gap":
                del seq[draw(st.integers(0, len(seq) - 2))]
        local[p] += [{"process": p, "kind": "deliver", "msg": m} for m in seq]
        if draw(st.integers(0, 5)) == 0:
            local[p].append({"process": p, "kind": "crash"})
    if draw(st.integers(0, 6)) == 0:
        p = draw(st.sampled_from(procs))
        local[p].append({"process": p, "kind": "send", "msg": draw(st.sampled_from(order))})
    # sends first at each process's own pace: a random merge keeping local orders
    return merge(draw, {p: local[p] for p in procs})


def with_seq(records: list[dict], disorder: bool) -> list[dict]:
    """``seq`` numbering each process's records as they come (a recorder's), or, with
    ``disorder``, the last two of the busiest process numbered the other way round."""
    count: dict[str, int] = {}
    out = []
    for r in records:
        count[r["process"]] = count.get(r["process"], -1) + 1
        out.append(dict(r, seq=10 * count[r["process"]]))
    if disorder:
        p = max(count, key=count.get)
        mine = [r for r in out if r["process"] == p]
        if len(mine) >= 2:
            mine[-1]["seq"], mine[-2]["seq"] = mine[-2]["seq"], mine[-1]["seq"]
    return out


@given(near_total_order(), st.sampled_from([2, 4, 1 << 18]), st.booleans(),
       st.sampled_from(["none", "arrival", "disorder"]), st.sampled_from([3, 8, 1 << 16]))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
def test_hypothesis_runs_agree(tmp_path_factory, records, trim, grouped, seq, rows):
    if not records:
        return
    if seq != "none":
        records = with_seq(records, seq == "disorder")
    # a few records at a time: in the grouped layout the later processes lag behind the
    # retired prefix
    with small_windows(trim, rows):
        path = tmp_path_factory.mktemp("h") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        agree([path])
        agree([path], CORRECT, Options(scope="correct"))


def long_file(path, n: int, swap_at: int | None = None, procs: int = 4) -> None:
    with TraceWriter(path) as w:
        for t in long_trace_tables(n, n_processes=procs, seed=3, block=500,
                                   swap_at=swap_at):
            w.write_table(t)


def test_late_breach_found_on_held_records_with_positions_shifted(monkeypatch, tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    path = tmp_path / "late.parquet"
    long_file(path, 3000, swap_at=2900)
    props = [properties()[n] for n in ("integrity", "total-order-weak",
                                       "total-order-strong", "prefix-order", "global-order",
                                       "fifo-order")]
    run = _Run(props, Options(), False)
    agree([path], props, run=run)
    assert run.modes == {"slow": 1}
    report = check_stream([path], props)
    res = report.outcomes[0].results["prefix-order"]
    assert res.details["position"] >= 2900 - 1  # the late position, not one in the window


def test_memory_is_bounded_by_the_lag_not_the_length(monkeypatch, tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 256)
    path = tmp_path / "clean.parquet"
    long_file(path, 20_000)
    run = _Run(STREAMED, Options(), False)
    report = check_stream([path], STREAMED, run=run)
    assert report.exit_code() == 0 and run.modes == {"fast": 1}
    assert report.outcomes[0].events == 20_000 * 5
    # the held records never exceed a few windows, a small part of the 100,000
    assert run.peak_held < 10_000


def test_a_broken_view_trace_is_judged_on_its_held_records(tmp_path):
    recs, _ = faulty_trace("v", "view-mismatch", seed=1)
    path = tmp_path / "v.jsonl"
    write_records(path, recs)
    run = _Run(STREAMED, Options(), False)
    agree([path], run=run)
    assert run.modes == {"slow": 1}  # nothing retired: the held records are the trace


def test_a_property_without_a_stream_decider_is_refused(tmp_path):
    props = [properties()["rate"], properties()["integrity"]]
    assert not_streamed(props) == ["rate"]
    with pytest.raises(ValueError, match="rate"):
        check_stream([tmp_path / "x.jsonl"], props)


def test_check_stream_flag_and_the_switch(tmp_path):
    from tomkit.checker.stream.choose import long_input
    from tomkit.cli import main

    path = tmp_path / "l.parquet"
    long_file(path, 200)
    assert not long_input([path])  # 1,000 records: below STREAM_ROWS
    assert main(["check", "--stream", "-q", str(path)]) == 0
    assert main(["check", "--stream", "-q", "-p", "rate", "--rate-max", "1",
                 str(path)]) == 2


def test_the_check_switches_by_itself_for_one_long_parquet_trace(monkeypatch, tmp_path):
    import tomkit.checker.stream.choose as choose

    monkeypatch.setattr(choose, "STREAM_ROWS", 500)
    one = tmp_path / "one.parquet"
    long_file(one, 200)  # 1,000 records, one trace
    many = tmp_path / "many.parquet"
    recs = []
    for i in range(3):
        r, _ = faulty_trace(f"t{i}", "swap", seed=i, n_messages=40)
        recs += r
    write_records(many, recs)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    assert choose.long_input([one])
    assert not choose.long_input([many])  # several traces: the whole-trace engine's
    assert not choose.long_input([broken])  # the reader will say what is wrong


@pytest.mark.parametrize("fault", [None, "later", "unknown", "self"])
def test_causal_order_with_deps_into_the_retired_prefix(small_window, tmp_path, fault,
                                                        monkeypatch):
    """Each send depends on the message before it, which the window has long retired:
    the single pass checks each dependency as its message is placed in the sequence, so
    a clean run stays in it (no false alarm), and a bad dependency goes to the exact
    check with the whole-trace checker's witness."""
    n, procs = 60, ["p0", "p1", "p2"]
    recs = []
    for i in range(n):
        deps = [f"m{i - 1}"] if i else []
        if i == 40 and fault == "later":
            deps = [f"m{i + 1}"]
        elif i == 40 and fault == "unknown":
            deps = ["nowhere"]
        elif i == 40 and fault == "self":
            deps = [f"m{i}"]
        recs.append({"trace": "t", "process": procs[i % 3], "kind": "send", "msg": f"m{i}",
                     "deps": deps})
        recs += [{"trace": "t", "process": p, "kind": "deliver", "msg": f"m{i}"}
                 for p in procs]
    path = tmp_path / "c.jsonl"
    write_records(path, recs)
    import tomkit.checker.stream.driver as driver

    monkeypatch.setattr(driver, "READ_ROWS", 16)  # many batches: the window moves on
    causal = [properties()["causal-order"], properties()["integrity"]]
    run = _Run(causal, Options(), False)
    agree([path], causal, run=run)
    # decided in the pass; a broken one on its held records, its retired deps left out
    # (reduced.py)
    assert run.modes == ({"fast": 1} if fault is None else {"slow": 1})
    assert not run.whole
    assert check_stream([path], causal, Options()).exit_code() == (fault is not None)
