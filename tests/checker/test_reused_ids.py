"""A message id sent more than once (by two processes, or twice by one): integrity reports
the reuse; fifo-order and causal-order read the id as one message with several send events
(their module docstrings) and report only breaches of their own definitions, with the
same verdict, witness and sentence in the exact check, the vectorized engine, the whole
trace and the single pass (the Spark engines: these traces are in
tests/checker/spark/test_spark_scan.py's data set). Random traces are checked against the
definitions read literally, and no sentence contradicts itself."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reused_ids import CASES, NAMES, H, U, V
from tracedsl import check_all, chunk_of, parse

from tomkit.checker.engine import check_paths
from tomkit.checker.properties import EXACT, Options, resolve
from tomkit.checker.stream.driver import check_stream
from tomkit.checker.trace import Trace
from tomkit.traces.writer import write_records


def _result_dicts(report) -> dict:
    """Per (trace, property): its verdict and, where the report keeps one, its result."""
    return {(o.trace, k): (str(v), o.results[k].to_dict() if k in o.results else None)
            for o in report.outcomes for k, v in o.verdicts.items()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_engine_gives_the_same_verdict_witness_and_sentence(case, tmp_path):
    text, fifo, fifo_text, causal, causal_text = CASES[case]
    recs = parse(text, trace=case)
    got = check_all(recs, NAMES)  # the exact check, the chunk's view of it, vectorized
    assert (got["fifo-order"].verdict, got["fifo-order"].explanation if fifo == V else "") \
        == (fifo, fifo_text)
    assert (got["causal-order"].verdict,
            got["causal-order"].explanation if causal == V else "") == (causal, causal_text)
    integ = got["integrity"]
    assert integ.verdict == V and integ.clause == "duplicate-send"
    assert re.fullmatch(r"message id m0 is sent twice \(by \w( and by \w)?\)\.",
                        integ.explanation), integ.explanation
    # a reused id leaves FIFO and causal order to the exact check in the vectorized engine
    c = chunk_of(recs)
    for name in ("fifo-order", "causal-order"):
        code = int(resolve(name).detect(c, Options())[0])
        assert code == EXACT or got[name].verdict == U, (name, code)
    # the whole trace and the single pass, on both layouts of the file
    props = [resolve(n) for n in NAMES]
    for layout, rs in (("as-written", recs), ("by-process", sorted(recs, key=lambda r:
                                                                   r["process"]))):
        path = tmp_path / f"{layout}.jsonl"
        write_records(path, rs)
        whole = _result_dicts(check_paths([path], props, Options()))
        single = _result_dicts(check_stream([path], props, Options()))
        assert single == whole, layout
        assert whole[(case, "fifo-order")][0] == str(fifo)
        assert whole[(case, "causal-order")][0] == str(causal)


def test_the_witness_cites_the_reused_ids_send_by_the_sender_in_question():
    recs = parse("b send m0\nb send x\na send m0\np deliver x\np deliver m0")
    res = check_all(recs, ["fifo-order"])["fifo-order"]
    sends = [(w.process, w.msg, w.index) for w in res.witness if w.kind == "send"]
    assert sends == [("b", "m0", 0), ("b", "x", 1)]  # b's own sends, not a's send of m0


def test_an_unsent_delivery_repeated_counts_once_as_unsent():
    recs = parse("a send m0\np deliver x\np deliver x\np deliver m0")
    res = check_all(recs, ["integrity"])["integrity"]
    # one duplicate delivery and one unsent id, not a second "creation" for the repeat
    assert res.verdict == V and res.details == {"violations": 2}


# ---- random traces against the definitions read literally --------------------------------

@st.composite
def reusing_trace(draw):
    """Sends (some ids by two processes, some twice by one, some with deps) and first
    deliveries in random orders, with gaps; no views."""
    procs = ["a", "b", "c"][:draw(st.integers(1, 3))]
    msgs = [f"m{i}" for i in range(draw(st.integers(1, 5)))]
    deps = draw(st.booleans())
    recs = []
    for _ in range(draw(st.integers(1, 8))):
        rec = {"trace": "t", "process": draw(st.sampled_from(procs)), "kind": "send",
               "msg": draw(st.sampled_from(msgs))}
        if deps:
            rec["deps"] = draw(st.lists(st.sampled_from(msgs), max_size=2, unique=True))
        recs.append(rec)
    for p in ("p", "q"):
        seq = draw(st.permutations(msgs))[:draw(st.integers(0, len(msgs)))]
        recs += [{"trace": "t", "process": p, "kind": "deliver", "msg": m} for m in seq]
    return recs


def literal_fifo(trace: Trace) -> bool:
    """If a process sends m before m' (its first sends of each), no process delivers m'
    unless it delivered m before."""
    idx = trace.delivery_index
    for s in trace.processes:
        order = list(trace.own_sends[s])
        for m, m2 in itertools.combinations(order, 2):
            for p in trace.processes:
                if m2 in idx[p] and not (m in idx[p] and idx[p][m] < idx[p][m2]):
                    return False
    return True


def literal_causal(trace: Trace) -> bool:
    """Every dependency any send of m' lists is delivered before m' wherever m' is."""
    idx = trace.delivery_index
    for sends in trace.send_lists.values():
        for e in sends:
            for d in e.deps or ():
                for p in trace.processes:
                    if e.msg in idx[p] and not (d in idx[p] and idx[p][d] < idx[p][e.msg]):
                        return False
    return True


@given(reusing_trace())
@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_fifo_and_causal_are_their_definitions_on_reused_ids(recs):
    got = check_all(recs, ["fifo-order", "causal-order"])  # the engines agree, too
    trace = Trace.from_records(recs)
    assert (got["fifo-order"].verdict == H) == literal_fifo(trace)
    causal = got["causal-order"]
    if causal.verdict != U:
        assert (causal.verdict == H) == literal_causal(trace)
    for res in got.values():
        if res.verdict == V:  # "#i ... only later, as #j" says j > i
            m = re.search(r"as #(\d+) and delivers \w+ only later, as #(\d+)",
                          res.explanation)
            assert m is None or int(m.group(2)) > int(m.group(1)), res.explanation
