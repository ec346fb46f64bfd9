"""Tests of the trace generators against a small, independent reference checker.

The reference predicates below restate the property definitions of the
``tomkit.traces.generate`` docstring directly over records, so that every planted fault's
ground truth (its property plus ``also_violates``) is checked exactly: those properties
are violated, all the others hold.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import jsonschema
import pyarrow as pa
import pytest

from tomkit.traces.generate import (
    DELAY_MAX,
    FAULTS,
    LATENCY_BOUND,
    PROPERTIES,
    SLOW_FACTOR,
    bulk_table,
    clean_trace,
    clean_traces,
    faulty_trace,
    generate_mixed,
)
from tomkit.traces.schema import ARROW_SCHEMA, json_schema

VALIDATOR = jsonschema.Draft202012Validator(json_schema())

MODES = {
    "plain": {},
    "views": {"views": True},
    "crash": {"crash": True},
    "small": {"n_processes": 3, "n_messages": 6},
    "crash5": {"n_processes": 5, "n_messages": 9, "crash": True},
    "norecv": {"recv": False, "views": True},
}


# ---------------------------------------------------------------------------- helpers


class Trace:
    """One trace's records, indexed the way the property definitions need."""

    def __init__(self, records: list[dict]):
        self.records = records
        self.local: dict[str, list[dict]] = defaultdict(list)
        self.sends: dict[str, dict] = {}
        self.sent_by: dict[str, list[str]] = defaultdict(list)
        for r in records:
            self.local[r["process"]].append(r)
            if r["kind"] == "send":
                self.sends[r["msg"]] = r
                self.sent_by[r["process"]].append(r["msg"])
        self.procs = sorted(self.local)
        self.D = {p: [r["msg"] for r in rs if r["kind"] == "deliver"]
                  for p, rs in self.local.items()}
        self.crashed = {p for p, rs in self.local.items() if any(r["kind"] == "crash" for r in rs)}
        self.correct = [p for p in self.procs if p not in self.crashed]
        self.first = {p: list(dict.fromkeys(d)) for p, d in self.D.items()}
        self.pos = {p: {m: k for k, m in enumerate(d)} for p, d in self.first.items()}

    def past(self, m: str) -> set[str]:
        seen: set[str] = set()
        todo = list(self.sends[m].get("deps", [])) if m in self.sends else []
        while todo:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo += self.sends[x].get("deps", []) if x in self.sends else []
        return seen


def violated(records: list[dict], bound: float = LATENCY_BOUND) -> set[str]:
    """The properties tomkit's checkers find violated (both engines, which must agree)."""
    from tracedsl import check_all as both_engines

    from tomkit.checker.properties import Options, properties
    from tomkit.checker.result import Verdict

    opts = Options(latency_bound=bound)
    # the catalogue the ground truth speaks of (traces/generate.py's PROPERTIES); the
    # QoS properties (member-liveness, realtime-latency, rate) are tested on their own
    results = both_engines(records, [n for n in properties() if n in PROPERTIES], opts)
    return {n for n, res in results.items() if res.verdict == Verdict.VIOLATED}


def check_valid_and_ordered(records: list[dict]) -> None:
    for r in records:
        VALIDATOR.validate(r)
        assert all(v is not None for v in r.values())
    t = Trace(records)
    for rs in t.local.values():
        times = [r["time"] for r in rs if "time" in r]
        assert times == sorted(times) and len(set(times)) == len(times)
    all_times = [r["time"] for r in records if "time" in r]
    assert all_times == sorted(all_times), "records are merged by time"


def check_clean_semantics(records: list[dict], n: int, m: int, *, recv: bool = True) -> None:
    t = Trace(records)
    order = [f"m{i}" for i in range(m)]
    assert set(t.sends) == set(order)
    assert [r["msg"] for r in records if r["kind"] == "send"] == order, "global = send order"
    assert t.procs == [f"p{i}" for i in range(n)] or set(t.procs) <= {f"p{i}" for i in range(n)}
    for p in t.procs:
        if p in t.crashed:
            assert t.D[p] == order[: len(t.D[p])], "a crashed process delivers a prefix"
            crash_at = next(k for k, r in enumerate(t.local[p]) if r["kind"] == "crash")
            assert crash_at == len(t.local[p]) - 1, "nothing after the crash"
        else:
            assert t.D[p] == order
    # deps: latest delivery at the sender before the send + its own previous message
    for rs in t.local.values():
        latest, own = None, None
        for r in rs:
            if r["kind"] == "deliver":
                latest = r["msg"]
            elif r["kind"] == "send":
                expect = sorted({x for x in (latest, own) if x}, key=lambda x: int(x[1:]))
                assert r["deps"] == expect
                assert all(int(d[1:]) < int(r["msg"][1:]) for d in r["deps"])
                own = r["msg"]
    if recv:
        for p, rs in t.local.items():
            idx = {(r["kind"], r["msg"]): r for r in rs if "msg" in r}
            for msg in t.D[p]:
                rv, dv = idx[("recv", msg)], idx[("deliver", msg)]
                assert t.sends[msg]["time"] < rv["time"] < dv["time"]
                assert rs.index(rv) < rs.index(dv)
    else:
        assert not any(r["kind"] == "recv" for r in records)
    assert violated(records) == set()


# ---------------------------------------------------------------------------- clean traces


def test_deterministic_and_seed_sensitive():
    a = clean_trace("t", seed=5, views=True, crash=True)
    assert a == clean_trace("t", seed=5, views=True, crash=True)
    assert a != clean_trace("t", seed=6, views=True, crash=True)
    f1 = faulty_trace("t", "cycle3", seed=3)
    assert f1 == faulty_trace("t", "cycle3", seed=3)
    assert f1 != faulty_trace("t", "cycle3", seed=4)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("seed", range(4))
def test_clean_trace(mode, seed):
    kw = MODES[mode]
    records = clean_trace("t0", seed=seed, **kw)
    check_valid_and_ordered(records)
    check_clean_semantics(records, kw.get("n_processes", 4), kw.get("n_messages", 20),
                          recv=kw.get("recv", True))


def test_recv_reorders_somewhere():
    # Network reordering: some process receives in an order different from delivery.
    t = Trace(clean_trace("t0", seed=0, n_messages=40))
    assert any([r["msg"] for r in rs if r["kind"] == "recv"] != t.D[p]
               for p, rs in t.local.items())


def test_switches_drop_fields():
    records = clean_trace("t0", seed=1, recv=False, deps=False, times=False)
    check_valid_and_ordered(records)
    assert {r["kind"] for r in records} == {"send", "deliver"}
    assert not any("deps" in r or "time" in r for r in records)


@pytest.mark.parametrize("seed", range(6))
def test_views_and_crash_vsync(seed):
    records = clean_trace("t0", seed=seed, crash=True, n_processes=4, n_messages=12)
    t = Trace(records)
    assert len(t.crashed) == 1
    (c,) = t.crashed
    views = {p: [r for r in rs if r["kind"] == "view"] for p, rs in t.local.items()}
    assert [v["view"] for v in views[c]] == ["v1"]
    for p in t.correct:
        assert [v["view"] for v in views[p]] == ["v1", "v2"]
        assert c not in views[p][1]["members"] and p in views[p][1]["members"]
    # the crashed process sends nothing after its crash
    crash_time = next(r["time"] for r in t.local[c] if r["kind"] == "crash")
    assert all(r["time"] < crash_time for r in t.local[c] if r["kind"] == "send")
    assert "virtual-synchrony" not in violated(records)


def test_clean_traces_contiguous():
    records = list(clean_traces(3, n_processes=3, n_messages=5, seed=2, views=True))
    ids = [r["trace"] for r in records]
    assert ids == sorted(ids, key=lambda x: int(x[1:]))
    assert list(dict.fromkeys(ids)) == ["t0", "t1", "t2"]
    first = [r for r in records if r["trace"] == "t0"]
    assert first == clean_trace("t0", n_processes=3, n_messages=5, seed=[2, 0], views=True)


# ---------------------------------------------------------------------------- faults


def _fault_cases():
    for fault in FAULTS:
        for mode in MODES:
            for seed in range(4):
                yield fault, mode, seed


@pytest.mark.parametrize(("fault", "mode", "seed"), list(_fault_cases()))
def test_fault_violates_exactly_what_it_claims(fault, mode, seed):
    kw = MODES[mode]
    try:
        records, truth = faulty_trace("f", fault, seed=seed, **kw)
    except ValueError:
        # Only faults whose pattern needs more correct processes than the options give.
        assert fault == "cycle3" and kw.get("crash") and kw.get("n_processes", 4) < 4
        return
    check_valid_and_ordered(records)
    assert truth["trace"] == "f" and truth["fault"] == fault
    assert truth["property"] == FAULTS[fault]
    # a view-agreement fault is about view records, no message
    assert truth["processes"] and (truth["messages"] or truth["property"] == "view-agreement")
    assert set(truth["also_violates"]) <= set(PROPERTIES) - {truth["property"]}
    bound = truth.get("bound", LATENCY_BOUND)
    expect = {truth["property"], *truth["also_violates"]}
    assert violated(records, bound) == expect


def _one(fault, seed=0, **kw):
    records, truth = faulty_trace("f", fault, seed=seed, **kw)
    return Trace(records), truth


@pytest.mark.parametrize("seed", range(3))
def test_pattern_duplicate(seed):
    t, g = _one("duplicate-delivery", seed)
    (p,), (m,) = g["processes"], g["messages"]
    assert t.D[p].count(m) == 2
    k = t.D[p].index(m)
    assert t.D[p][k + 1] == m, "the duplicate follows the first delivery"
    assert all(t.D[q].count(m) == 1 for q in t.procs if q != p)


def test_pattern_unsent():
    t, g = _one("unsent-delivery", crash=True)
    (m,) = g["messages"]
    assert m not in t.sends
    assert set(g["processes"]) == {p for p in t.procs if m in t.D[p]}
    assert set(t.correct) <= set(g["processes"])
    at = {t.first[p].index(m) for p in t.correct}
    assert len(at) == 1, "everyone delivers it at the same position"


@pytest.mark.parametrize("seed", range(3))
def test_pattern_swap(seed):
    t, g = _one("swap", seed)
    (p,), (a, b) = g["processes"], g["messages"]
    assert t.pos[p][b] < t.pos[p][a]
    assert all(t.pos[q][a] < t.pos[q][b] for q in t.procs if q != p)
    assert t.sends[a]["process"] != t.sends[b]["process"]
    assert a not in t.past(b)


@pytest.mark.parametrize("seed", range(3))
def test_pattern_gap(seed):
    t, g = _one("gap", seed)
    (q,), (m, m2) = g["processes"], g["messages"]
    assert m not in t.D[q] and m2 in t.D[q]
    others = [p for p in t.procs if p != q]
    assert all(t.pos[p][m] < t.pos[p][m2] for p in others)
    assert t.D[q] == [x for x in t.D[others[0]] if x != m], "q delivers everything else"
    s = t.sends[m]["process"]
    assert t.sent_by[s][-1] == m, "m is its sender's last message"
    assert not any(m in r.get("deps", []) for r in t.sends.values())


@pytest.mark.parametrize("seed", range(3))
def test_pattern_cycle3(seed):
    t, g = _one("cycle3", seed, n_processes=5)
    p, q, r = g["processes"]
    a, b, c = g["messages"]
    assert t.pos[p][a] < t.pos[p][b] and c not in t.pos[p]
    assert t.pos[q][b] < t.pos[q][c] and a not in t.pos[q]
    assert t.pos[r][c] < t.pos[r][a] and b not in t.pos[r]
    # every pair of processes agrees on its common messages ...
    for x, y in itertools.combinations(t.procs, 2):
        common = [m for m in t.first[x] if m in t.pos[y]]
        assert [t.pos[y][m] for m in common] == sorted(t.pos[y][m] for m in common)
    # ... but no single sequence fits all: the three precedences form a cycle
    prec = {(a, b), (b, c), (c, a)}
    for u, v in prec:
        assert any(t.pos[x].get(u, 1e9) < t.pos[x].get(v, -1) for x in t.procs)
    assert len({t.sends[x]["process"] for x in (a, b, c)}) == 3


@pytest.mark.parametrize("seed", range(3))
def test_pattern_causal(seed):
    t, g = _one("causal", seed)
    a, b = g["messages"]
    assert a in t.sends[b]["deps"]
    assert t.sends[a]["process"] != t.sends[b]["process"]
    assert all(t.pos[p][b] < t.pos[p][a] for p in g["processes"])
    assert set(g["processes"]) == set(t.procs)
    # b's sender received a before sending b
    sb = t.sends[b]["process"]
    kinds = [(r["kind"], r.get("msg")) for r in t.local[sb]]
    assert kinds.index(("recv", a)) < kinds.index(("send", b))


@pytest.mark.parametrize("seed", range(3))
def test_pattern_fifo(seed):
    t, g = _one("fifo", seed)
    a, b = g["messages"]
    s = t.sends[a]["process"]
    assert t.sends[b]["process"] == s
    assert t.sent_by[s].index(a) + 1 == t.sent_by[s].index(b)
    assert a not in t.past(b) and b not in t.past(a)
    assert all(t.pos[p][b] < t.pos[p][a] for p in t.procs)


@pytest.mark.parametrize("kw", [{}, {"crash": True}])
def test_pattern_view_mismatch(kw):
    t, g = _one("view-mismatch", 1, **kw)
    (q,), (m,) = g["processes"], g["messages"]
    kinds = [(r["kind"], r.get("view") or r.get("msg")) for r in t.local[q]]
    assert ("view", "v1") in kinds and ("view", "v2") in kinds
    assert kinds[-1] == ("crash", None) and kinds[-2] == ("view", "v2")
    assert m not in t.D[q]
    for p in t.correct:
        seq = [(r["kind"], r.get("view") or r.get("msg")) for r in t.local[p]]
        v1, v2 = seq.index(("view", "v1")), seq.index(("view", "v2"))
        assert v1 < seq.index(("deliver", m)) < v2
        assert seq[-1][0] == "view" and seq[-1][1] == "v3"


@pytest.mark.parametrize("kw", [{}, {"crash": True}])
def test_pattern_wrong_view(kw):
    t, g = _one("wrong-view", 2, **kw)
    (q,), (m,) = g["processes"], g["messages"]
    seq = [(r["kind"], r.get("view") or r.get("msg")) for r in t.local[q]]
    assert seq.index(("view", "v2")) + 1 == seq.index(("deliver", m))
    s = t.sends[m]["process"]
    sseq = [(r["kind"], r.get("view") or r.get("msg")) for r in t.local[s]]
    assert sseq.index(("send", m)) < sseq.index(("view", "v2")), "sent in v1"
    assert t.D[q] == t.D[next(p for p in t.correct if p != q)], "delivery order unchanged"


@pytest.mark.parametrize("seed", range(3))
def test_pattern_lost(seed):
    t, g = _one("lost", seed)
    (q,), (m,) = g["processes"], g["messages"]
    assert q in t.correct and m not in t.D[q]
    assert all(t.D[p][-1] == m for p in t.correct if p != q)
    assert "virtual-synchrony" not in g["also_violates"]
    assert "agreement" in g["also_violates"]
    assert ("validity" in g["also_violates"]) == (t.sends[m]["process"] == q)
    _, gv = _one("lost", seed, views=True)
    assert {"virtual-synchrony", "agreement"} <= set(gv["also_violates"])


@pytest.mark.parametrize("seed", range(3))
def test_pattern_slow(seed):
    t, g = _one("slow", seed)
    (p,), (m,) = g["processes"], g["messages"]
    assert g["bound"] == LATENCY_BOUND
    lat = {(r["process"], r["msg"]): r["time"] - t.sends[r["msg"]]["time"]
           for r in t.records if r["kind"] == "deliver"}
    assert lat[(p, m)] >= SLOW_FACTOR * DELAY_MAX - 1e-9
    assert max(v for k, v in lat.items() if k != (p, m)) <= g["bound"]


def test_fault_option_errors():
    with pytest.raises(ValueError):
        faulty_trace("f", "no-such-fault")
    with pytest.raises(ValueError):
        faulty_trace("f", "slow", times=False)
    with pytest.raises(ValueError):
        faulty_trace("f", "causal", deps=False)
    with pytest.raises(ValueError):
        faulty_trace("f", "cycle3", n_processes=3, crash=True)
    with pytest.raises(TypeError):
        faulty_trace("f", "swap", bogus=1)


def test_generate_mixed():
    records, truths = generate_mixed(40, faulty=0.5, seed=3, n_processes=4, n_messages=10)
    assert (records, truths) == generate_mixed(40, faulty=0.5, seed=3, n_processes=4,
                                               n_messages=10)
    ids = list(dict.fromkeys(r["trace"] for r in records))
    assert ids == [f"t{k}" for k in range(40)]
    assert len(truths) == 20
    assert {g["fault"] for g in truths} == set(FAULTS), "round-robin covers every fault"
    by_trace = defaultdict(list)
    for r in records:
        by_trace[r["trace"]].append(r)
    bad = {g["trace"]: g for g in truths}
    for tid, recs in by_trace.items():
        for r in recs:
            VALIDATOR.validate(r)
        if tid in bad:
            g = bad[tid]
            assert violated(recs, g.get("bound", LATENCY_BOUND)) == {
                g["property"], *g["also_violates"]}
        else:
            assert violated(recs) == set()


# ---------------------------------------------------------------------------- bulk


def test_bulk_table_small():
    n_traces, n, m = 5, 3, 7
    tables = list(bulk_table(n_traces, n_processes=n, n_messages=m, seed=4))
    table = pa.concat_tables(tables)
    assert all(tb.schema == ARROW_SCHEMA for tb in tables)
    assert table.num_rows == n_traces * (m + n * m)
    for col in ("view", "members", "seq"):
        assert table.column(col).null_count == table.num_rows
    rows = [{k: v for k, v in r.items() if v is not None} for r in table.to_pylist()]
    ids = [r["trace"] for r in rows]
    assert list(dict.fromkeys(ids)) == [f"t{k}" for k in range(n_traces)]
    for k in range(n_traces):
        recs = [r for r in rows if r["trace"] == f"t{k}"]
        check_valid_and_ordered(recs)
        check_clean_semantics(recs, n, m, recv=False)
    again = pa.concat_tables(bulk_table(n_traces, n_processes=n, n_messages=m, seed=4))
    assert again.equals(table)
    assert not pa.concat_tables(bulk_table(n_traces, n_processes=n, n_messages=m,
                                           seed=5)).equals(table)


def test_bulk_table_splits_whole_traces():
    tables = list(bulk_table(2300, n_processes=8, n_messages=100, seed=0))
    per_trace = 100 * 9
    assert sum(tb.num_rows for tb in tables) == 2300 * per_trace
    assert len(tables) == 3 and all(tb.num_rows <= 1_000_000 for tb in tables)
    assert tables[0].num_rows > 900_000
    firsts = [tb.column("trace")[0].as_py() for tb in tables]
    lasts = [tb.column("trace")[-1].as_py() for tb in tables]
    assert firsts[0] == "t0" and lasts[-1] == "t2299"
    for a, b in zip(lasts, firsts[1:]):
        assert int(b[1:]) == int(a[1:]) + 1, "traces are whole and in order"
