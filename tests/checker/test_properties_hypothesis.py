"""Property-based tests of the checkers: known-good families pass, planted swaps fail, the
vectorized engine agrees with the reference on random traces, and the linear-time
reformulations agree with the literal definitions."""

from __future__ import annotations

import itertools

import networkx as nx
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracedsl import CODE, check, chunk_of

from tomkit.checker.properties import EXACT, Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace

SETTINGS = settings(max_examples=examples(75), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def deliveries(trace_id: str, seqs: dict[str, list[str]]) -> list[dict]:
    recs = []
    for p, seq in seqs.items():
        recs += [{"trace": trace_id, "process": p, "kind": "deliver", "msg": m} for m in seq]
    return recs


@st.composite
def prefixes_of_one_order(draw):
    n_msgs = draw(st.integers(1, 12))
    order = [f"m{i}" for i in range(n_msgs)]
    n_procs = draw(st.integers(1, 5))
    return {f"p{i}": order[: draw(st.integers(0, n_msgs))] for i in range(n_procs)}


@given(prefixes_of_one_order())
@SETTINGS
def test_prefixes_of_one_order_pass_every_order_property(seqs):
    recs = deliveries("t", seqs)
    if not recs:
        return
    for name in ("total-order-weak", "total-order-strong", "global-order"):
        assert check(recs, name).verdict == Verdict.HOLDS


@given(prefixes_of_one_order(), st.data())
@SETTINGS
def test_a_swap_at_one_process_is_caught(seqs, data):
    # two processes deliver at least two common messages; swap two of them at the first
    seqs = dict(seqs)
    longest = max(len(s) for s in seqs.values())
    if longest < 2:
        return
    full = next(s for s in seqs.values() if len(s) == longest)
    other_len = data.draw(st.integers(2, longest))
    seqs["x"] = list(full)
    seqs["y"] = list(full[:other_len])
    i = data.draw(st.integers(0, other_len - 2))
    j = data.draw(st.integers(i + 1, other_len - 1))
    seqs["x"][i], seqs["x"][j] = seqs["x"][j], seqs["x"][i]
    recs = deliveries("t", seqs)
    for name in ("total-order-weak", "total-order-strong", "global-order"):
        res = check(recs, name)
        assert res.verdict == Verdict.VIOLATED, name
        assert len(res.witness) >= 3


# ---- random traces: both engines agree ---------------------------------------------------------

@st.composite
def random_trace(draw, trace_id="t"):
    """Arbitrary traces over few processes and messages: sends with deps, deliveries with
    repeats, gaps and reorders, views and crashes."""
    procs = [f"p{i}" for i in range(draw(st.integers(1, 4)))]
    msgs = [f"m{i}" for i in range(draw(st.integers(1, 6)))]
    views = ["v1", "v2", "v3"]
    use_views = draw(st.booleans())
    use_deps = draw(st.booleans())
    use_sends = draw(st.booleans())
    events = []
    sent = set()
    n = draw(st.integers(1, 30))
    for _ in range(n):
        p = draw(st.sampled_from(procs))
        kinds = ["deliver", "deliver", "deliver"] + (["send"] if use_sends else []) \
            + (["view"] if use_views else []) + ["crash"] * draw(st.sampled_from([0, 0, 1]))
        k = draw(st.sampled_from(kinds))
        rec = {"trace": trace_id, "process": p, "kind": k}
        if k in ("send", "deliver"):
            rec["msg"] = draw(st.sampled_from(msgs))
        if k == "send":
            if rec["msg"] in sent and draw(st.booleans()):
                continue
            sent.add(rec["msg"])
            if use_deps:
                rec["deps"] = draw(st.lists(st.sampled_from(msgs), max_size=2, unique=True))
        if k == "view":
            rec["view"] = draw(st.sampled_from(views))
            rec["members"] = draw(st.lists(st.sampled_from(procs), min_size=1, unique=True))
        if draw(st.booleans()):
            rec["time"] = draw(st.floats(0, 10, allow_nan=False))
        events.append(rec)
    return events


@given(st.lists(random_trace(), min_size=1, max_size=4), st.sampled_from([None, 2.0]))
@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
def test_vectorized_engine_agrees_with_reference(traces, bound):
    records = []
    for i, t in enumerate(traces):
        records += [dict(r, trace=f"t{i}") for r in t]
    if not records:
        return
    options = Options(latency_bound=bound)
    c = chunk_of(records)
    for name, prop in properties().items():
        codes = prop.detect(c, options)
        for ti in range(c.ntr):
            ref = prop.check(c.trace(ti), options)
            if codes[ti] != EXACT:
                assert CODE[int(codes[ti])] == ref.verdict, (name, c.trace_names[ti], ref)
            if ref.verdict == Verdict.VIOLATED:
                assert ref.witness and ref.explanation


# ---- the linear-time checks against the literal definitions ----------------------------------

def literal_weak(trace: Trace) -> bool:
    idx = trace.delivery_index
    for p, q in itertools.combinations(trace.processes, 2):
        common = set(idx[p]) & set(idx[q])
        for a, b in itertools.permutations(common, 2):
            if idx[p][a] < idx[p][b] and idx[q][b] < idx[q][a]:
                return False
    return True


def literal_strong(trace: Trace) -> bool:
    """If p delivers m before m' (same view), every q delivering m' in that view delivers m
    before it (in that view)."""
    info = {}
    for p in trace.processes:
        views = trace.delivery_views(p)
        info[p] = {e.msg: (i, views[i]) for i, e in trace.first_deliveries[p]}
    for p, q in itertools.permutations(trace.processes, 2):
        for m2, (j, v) in info[p].items():
            if m2 not in info[q] or info[q][m2][1] != v:
                continue
            for m, (i, vm) in info[p].items():
                if i < j and vm == v:
                    got = info[q].get(m)
                    if got is None or got[1] != v or got[0] > info[q][m2][0]:
                        return False
    return True


def min_cycle(trace: Trace) -> int | None:
    g = nx.DiGraph()
    for p in trace.processes:
        seq = [e.msg for _, e in trace.first_deliveries[p]]
        g.add_edges_from(itertools.combinations(seq, 2))
    best = None
    for u, v in g.edges:
        try:
            d = nx.shortest_path_length(g, v, u) + 1
        except nx.NetworkXNoPath:
            continue
        best = d if best is None else min(best, d)
    return best


@given(random_trace())
@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
def test_order_checks_match_literal_definitions(records):
    trace = Trace.from_records(records)
    props = properties()
    weak = props["total-order-weak"].check(trace, Options()).verdict == Verdict.HOLDS
    strong = props["total-order-strong"].check(trace, Options()).verdict == Verdict.HOLDS
    glob = props["global-order"].check(trace, Options())
    assert weak == literal_weak(trace)
    assert strong == literal_strong(trace)
    cyc = min_cycle(trace)
    assert (glob.verdict == Verdict.HOLDS) == (cyc is None)
    if cyc is not None:
        assert len(glob.details["cycle"]) == cyc
