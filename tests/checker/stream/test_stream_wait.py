"""A file grouped by process where every process sends (checker/stream/canon.py: the
positions whose sends have not been read retire all the same, their senders and ranks
checked as the sends come): bounded memory on a clean trace, and the whole-trace
checker's report on planted faults in the part that waited."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from stream_oracle import STREAMED, agree, by_process

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.check_run import plan
from tomkit.checker.properties import Options
from tomkit.checker.stream.driver import _Run
from tomkit.traces.long_trace import long_trace_tables
from tomkit.traces.writer import TraceWriter, write_records


def test_a_grouped_trace_where_every_process_sends_is_held_in_a_window(monkeypatch,
                                                                         tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    monkeypatch.setattr(driver, "READ_ROWS", 500)
    t = pa.concat_tables(list(long_trace_tables(5000, n_processes=4, seed=1)))
    path = tmp_path / "grouped.parquet"
    with TraceWriter(path) as w:
        for p in sorted(set(t.column("process").to_pylist())):
            w.write_table(t.filter(pc.equal(t.column("process"), p)))
    props = plan(Options()).properties
    run = _Run(props, Options(), False)
    agree([path], props, run=run)
    assert run.modes == {"fast": 1}
    # p0's records come first and p3's last: before, the window held all 5,000
    # positions and p0's records until p3's sends were read
    assert run.peak_window < 500 and run.peak_held < 2_000, (run.peak_window,
                                                             run.peak_held)


def grouped(n: int, fault: str | None, at: int) -> list[dict]:
    """p0 to p3 each send every fourth message and deliver all, in one order; a fault
    in the part p0's records retire before the others' sends are read."""
    procs = ["p0", "p1", "p2", "p3"]
    local: dict[str, list[dict]] = {p: [] for p in procs}
    for i in range(n):
        s = procs[i % 4]
        if not (fault == "unsent" and i == at):
            send = {"process": s, "kind": "send", "msg": f"m{i}"}
            if fault == "deps" and i == at:
                send["deps"] = [f"m{i - 1}"]
            if fault == "deps-later" and i == at:  # a dependency after it in S
                send["deps"] = [f"m{i + 1}"]
            local[s].append(send)
        if fault == "twice" and i == at:
            local["p3"].append({"process": "p3", "kind": "send", "msg": f"m{i}"})
        for p in procs:
            local[p].append({"process": p, "kind": "deliver", "msg": f"m{i}"})
    if fault == "fifo":  # p2 sends its two messages from m_at on in the other order
        s = [r for r in local["p2"] if r["kind"] == "send"]
        j = at // 4
        s[j]["msg"], s[j + 1]["msg"] = s[j + 1]["msg"], s[j]["msg"]
    if fault == "swap":  # p2 delivers m_at and m_at+1 in the other order
        d = [r for r in local["p2"] if r["kind"] == "deliver"]
        d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    if fault == "again":  # p3 sends p0's first message again, long after it was checked
        local["p3"].append({"process": "p3", "kind": "send", "msg": "m0"})
    return [dict(r, trace="t") for p in procs for r in local[p]]


@pytest.mark.parametrize("fault", [None, "fifo", "twice", "unsent", "deps", "deps-later",
                                   "swap", "again"])
@pytest.mark.parametrize("at", [6, 42, 90])
def test_faults_where_sends_were_awaited(fault, at, monkeypatch, tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 8)
    monkeypatch.setattr(driver, "READ_ROWS", 16)
    path = tmp_path / "t.jsonl"
    write_records(path, grouped(100, fault, at))
    # the default properties measure no latency: the sends may be awaited (a latency
    # bound keeps the window, below)
    props = plan(Options()).properties
    run = _Run(props, Options(), False)
    agree([path], props, run=run)
    agree([path], STREAMED)
    if fault in (None, "deps"):  # a dependency before its message: no fault
        assert run.modes == {"fast": 1} and run.peak_window < 40, run.peak_window
    else:  # a break after positions retired unchecked: the whole-trace engine's
        assert run.modes == {"whole": 1} or run.modes == {"slow": 1}, run.modes
    # the interleaved layout of the same records: the same report
    path2 = tmp_path / "i.jsonl"
    recs = grouped(100, fault, at)
    write_records(path2, sorted(recs, key=lambda r: int(r["msg"][1:]) if r["msg"] else 0))
    agree([path2])
    assert by_process(recs) == recs  # grouped: by process, each process's order kept


@pytest.mark.parametrize("fault", ["deps", "deps-later"])
def test_deps_of_a_send_read_before_its_position_retired(fault, monkeypatch, tmp_path):
    # m8 is p0's: its send (with deps) is read with p0's records, before the FIFO pointer
    # reaches it, and its position retires unvalidated: its deps are checked then
    monkeypatch.setattr(canon, "TRIM_AT", 8)
    monkeypatch.setattr(driver, "READ_ROWS", 16)
    path = tmp_path / "t.jsonl"
    write_records(path, grouped(100, fault, 8))
    run = _Run(STREAMED, Options(), False)
    agree([path], run=run)
    # a dependency after it breaks the picture when m8 retires (its records held)
    assert run.modes == ({"fast": 1} if fault == "deps" else {"slow": 1}), run.modes
