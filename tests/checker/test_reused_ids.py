"""A message id sent more than once (by two processes, or twice by one): integrity reports
the reuse; fifo-order and causal-order read the id as one message with several send events
(their module docstrings) and report only breaches of their own definitions, with the
same verdict, witness and sentence in the exact check, the vectorized engine, the whole
trace and the single pass (the Spark engines: these traces are in
tests/checker/spark/test_spark_scan.py's data set). Random traces are checked against the
definitions read literally, and no sentence contradicts itself. The other properties that
name a message's send read the id the same way (each module's docstring): validity cites
the non-delivering sender's own send, latency runs from the earliest send, a reused id is
sent in each of its sends' views, and each correct sender's send is owed in
member-liveness; agreement reads deliveries only."""

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


# ---- the other properties that name a message's sender or its send ------------------------

def _timed(text: str, clock: str = "time") -> list[dict]:
    """The trace with every ``time=`` moved to ``clock`` (the DSL reads real_time as text)."""
    recs = parse(text)
    if clock != "time":
        for r in recs:
            if "time" in r:
                r[clock] = r.pop("time")
    return recs


def _sends(res) -> list[tuple]:
    """The send events the witness cites (a process's last event, a send too, has no index)."""
    return [(w.process, w.msg, w.index) for w in res.witness
            if w.kind == "send" and w.index is not None]


def _same_in_every_engine(recs, name, options, tmp_path):
    """The exact check (with the chunk's view and the vectorized code, check_all), the
    whole file and the single pass agree on the verdict, witness and sentence."""
    got = check_all(recs, [name], options)[name]
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    whole = _result_dicts(check_paths([path], [resolve(name)], options))
    single = _result_dicts(check_stream([path], [resolve(name)], options))
    assert single == whole and whole[("t", name)][0] == str(got.verdict)
    return got


@pytest.mark.parametrize("first,second", [("a", "z"), ("z", "a")])
def test_validity_cites_the_send_of_the_process_that_does_not_deliver(first, second,
                                                                      tmp_path):
    # both send m0; only the first delivers it: the second owes it, by its own send
    recs = parse(f"{first} send m0\n{second} send m0\n{first} deliver m0")
    res = _same_in_every_engine(recs, "validity", Options(), tmp_path)
    assert res.verdict == V
    assert res.explanation == f"correct process {second} sends m0 and never delivers it."
    assert _sends(res) == [(second, "m0", 0)]
    both = parse(f"{first} send m0\n{second} send m0\n{first} deliver m0\n{second} deliver m0")
    assert _same_in_every_engine(both, "validity", Options(), tmp_path).verdict == H


def test_agreement_reads_deliveries_only_so_a_reused_id_changes_nothing(tmp_path):
    recs = parse("z send m0\na send m0\na deliver m0")
    res = _same_in_every_engine(recs, "agreement", Options(), tmp_path)
    assert (res.verdict, res.explanation) == (
        V, "process a delivers m0; correct process z never delivers it.")
    assert _sends(res) == []
    recs = parse("z send m0\na send m0\na deliver m0\nz deliver m0")
    assert _same_in_every_engine(recs, "agreement", Options(), tmp_path).verdict == H


@pytest.mark.parametrize("clock,name,bound", [
    ("time", "latency", Options(latency_bound=3.0)),
    ("real_time", "realtime-latency", Options(realtime_bound=3.0))])
@pytest.mark.parametrize("late,early", [("a", "z"), ("z", "a")])
def test_latency_runs_from_the_earliest_send_whoever_sent_it(clock, name, bound, late,
                                                             early, tmp_path):
    # early sends m0 at 0, late again at 5, p delivers at 6: 6 s from the message's
    # first send (not 1 s from a resend, whichever process is first by name)
    recs = _timed(f"{late} send m0 time=5\n{early} send m0 time=0\np deliver m0 time=6",
                  clock)
    res = _same_in_every_engine(recs, name, bound, tmp_path)
    of = "of real time " if clock == "real_time" else ""
    assert (res.verdict, res.explanation) == (
        V, f"p delivers m0 6 s {of}after its first send (by {early}), over the bound of 3 s.")
    assert _sends(res) == [(early, "m0", 0)]
    # a resend just before the delivery does not hide the slow first send, nor a send
    # after the delivery (a negative "latency") shorten it
    recs = _timed(f"{early} send m0 time=0\np deliver m0 time=2\n{late} send m0 time=9",
                  clock)
    assert _same_in_every_engine(recs, name, bound, tmp_path).verdict == H


def test_latency_of_an_id_sent_once_keeps_its_sentence():
    res = check_all(parse("a send m0 time=0\np deliver m0 time=4"), ["latency"],
                    Options(latency_bound=3.0))["latency"]
    assert res.explanation == "p delivers m0 4 s after its send, over the bound of 3 s."


_VIEWS = "a view 1 members=a,z,p\nz view 1 members=a,z,p\np view 1 members=a,z,p\n"
_VIEW2 = "a view 2 members=a,z,p\nz view 2 members=a,z,p\np view 2 members=a,z,p\n"


@pytest.mark.parametrize("first,second", [("a", "z"), ("z", "a")])
@pytest.mark.parametrize("delivered_in", ["1", "2"])
def test_sending_view_a_reused_id_is_sent_in_each_of_its_sends_views(first, second,
                                                                      delivered_in,
                                                                      tmp_path):
    # first sends m0 in view 1, second in view 2: a delivery in either view is in a
    # view m0 was sent in (the false alarm: only the send first by name counted)
    before = "p deliver m0\n" if delivered_in == "1" else ""
    after = "p deliver m0\n" if delivered_in == "2" else ""
    recs = parse(f"{_VIEWS}{first} send m0\n{before}{_VIEW2}{second} send m0\n{after}")
    res = _same_in_every_engine(recs, "sending-view-delivery", Options(), tmp_path)
    assert res.verdict == H, res.explanation


def test_sending_view_a_delivery_in_none_of_its_sends_views_names_them_all(tmp_path):
    view3 = "a view 3 members=a,z,p\nz view 3 members=a,z,p\np view 3 members=a,z,p\n"
    recs = parse(f"{_VIEWS}z send m0\n{_VIEW2}a send m0\n{view3}p deliver m0")
    res = _same_in_every_engine(recs, "sending-view-delivery", Options(), tmp_path)
    assert (res.verdict, res.explanation) == (
        V, "m0 is sent in views 2 and 1 but p delivers it in view 3.")
    assert _sends(res) == [("a", "m0", 0)]  # a's send, in view 2 (a is first by name)


@pytest.mark.parametrize("faulty,correct", [("a", "z"), ("z", "a")])
def test_member_liveness_a_correct_resender_owes_the_message(faulty, correct, tmp_path):
    # the faulty first sender's send is owed to nobody; the correct one's is owed to q
    recs = parse(f"{faulty} send m0\n{faulty} crash\n{correct} send m0\n"
                 f"{correct} deliver m0\nq deliver x")
    res = _same_in_every_engine(recs, "member-liveness", Options(), tmp_path)
    assert (res.verdict, res.explanation) == (
        V, f"{correct} sends m0 and stays correct; q stays correct, but never delivers m0.")
    assert _sends(res) == [(correct, "m0", 0)]


@pytest.mark.parametrize("early,late", [("a", "z"), ("z", "a")])
def test_member_liveness_a_resend_after_the_join_is_owed_to_the_joiner(early, late,
                                                                       tmp_path):
    recs = parse(f"{early} send m0 time=0\nq join time=5\n{late} send m0 time=10\n"
                 f"{early} deliver m0\n{late} deliver m0")
    res = _same_in_every_engine(recs, "member-liveness", Options(), tmp_path)
    assert (res.verdict, res.explanation) == (
        V, f"{late} sends m0 and stays correct; q joined at time 5, before the send at "
        "time 10, and stays correct, but never delivers m0.")
    assert _sends(res) == [(late, "m0", 0)]
    # without the resend, nothing sent after q joined is owed to it
    recs = parse(f"{early} send m0 time=0\nq join time=5\n{early} deliver m0")
    assert _same_in_every_engine(recs, "member-liveness", Options(), tmp_path).verdict == H
