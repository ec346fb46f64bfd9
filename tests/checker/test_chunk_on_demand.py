"""The chunk reads deps, times and locations only when a property asks: what it then
reads must be what an eager read gave, and files that reach the engine in different
encodings (a Parquet file's dictionaries, JSON Lines' plain strings) still mix."""

from __future__ import annotations

import numpy as np
from tracedsl import check, chunk_of, parse

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.checker.result import Verdict
from tomkit.traces.generate import clean_trace, faulty_trace
from tomkit.traces.writer import write_records


def test_a_dependency_no_row_names_is_never_delivered():
    # b depends on z, which no record of the trace names: p and q deliver b without z
    recs = parse("""
        p send a
        p send b deps=a,z
        p deliver a
        p deliver b
        q deliver a
        q deliver b
    """)
    res = check(recs, "causal-order")  # asserts that detect and check agree
    assert res.verdict == Verdict.VIOLATED and "never delivers z" in res.explanation
    ok = parse("""
        p send a
        p send b deps=a
        p deliver a
        p deliver b
    """)
    assert check(ok, "causal-order").verdict == Verdict.HOLDS


def test_columns_read_on_demand_follow_the_sorted_rows():
    # records of three processes interleaved: the chunk sorts rows by (trace, process)
    recs = parse("""
        p send a deps= time=1
        q send b deps=a time=2
        r deliver a time=3
        p deliver a time=4
        q deliver a time=5
        r deliver b time=6
        p deliver b time=7
        q deliver b time=8
    """)
    c = chunk_of(recs)
    rows = [recs[int(line) - 1] for line in c.lines]  # JSON Lines: 1-based lines
    assert [r["process"] for r in rows] == sorted(r["process"] for r in recs)
    assert list(c.time) == [r["time"] for r in rows]
    assert [c.proc_names[p] for p in c.p] == [r["process"] for r in rows]
    sends = np.flatnonzero(c.dep_len >= 0)
    got = {c.msg_names[c.msg[s]]: [c.dep_names[d] for d in
                                   c.dep_codes[c.dep_off[s]:c.dep_off[s] + c.dep_len[s]]]
           for s in sends}
    assert got == {"a": [], "b": ["a"]}
    assert list(c.dep_tm) == [c.tm[np.flatnonzero(c.msg == c.msg_names.index("a"))[0]]]


def test_parquet_and_json_lines_merge(tmp_path):
    """One trace per process file, half in Parquet (dictionary-encoded columns) and half
    in JSON Lines (plain strings), checked as one input."""
    traces = [faulty_trace("f", "swap", seed=3, n_processes=4, n_messages=6)[0],
              clean_trace("c", seed=1, n_processes=4, n_messages=6)]
    files = []
    for k, proc in enumerate(["p0", "p1", "p2", "p3"]):
        path = tmp_path / (f"{proc}.parquet" if k % 2 else f"{proc}.jsonl")
        write_records(path, [r for t in traces for r in t if r["process"] == proc])
        files.append(path)
    whole = tmp_path / "whole.jsonl"
    write_records(whole, [r for t in traces for r in t])
    props = select(None, Options())
    merged = check_paths(files, props, Options(), merge=True)
    one = check_paths([whole], props, Options())
    verdicts = {o.trace: o.verdicts for o in one.outcomes}
    assert {o.trace: o.verdicts for o in merged.outcomes} == verdicts
    assert verdicts["f"]["total-order-weak"] == Verdict.VIOLATED
    assert set(verdicts["c"].values()) == {Verdict.HOLDS}
