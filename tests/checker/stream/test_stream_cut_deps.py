"""Causal order and latency across the cut (checker/stream/cutdeps.py, latencies.py's
"Across the cut", with narrow.py and viewcut.py): a run with deps and times broken early,
whose held records spill, is decided on the cut (the records of the messages around the
breach, the rest by a second canonical pass that checks deps and tallies latencies),
with the whole-trace checker's verdicts, witnesses and sentences. Planted faults early
in a run, with and without views, both layouts: deps on a message of the cut, on a tail
message, on a retired one, a dependency never sent, a late delivery before and after
the cut; which path decided; conditions c1 and c2 bearing weight; Hypothesis-made runs;
and what the exact checks read staying flat as the run grows."""

from __future__ import annotations

import random

import pytest
import test_stream_views_broken as broken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import STREAMED, agree, by_process, merge, records_read, small_windows

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.cutdeps as cutdeps
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.spill as spill
from tomkit.checker.properties import Options, properties, with_scope
from tomkit.checker.stream.driver import _Run, check_stream
from tomkit.checker.stream.narrow import narrows
from tomkit.traces.generate import FAULTS, faulty_trace
from tomkit.traces.writer import write_records

#: the properties the cut serves, causal order and both latencies among them (the
#: end-of-trace ones too, with the tail's clean pass: test_stream_cut_owed.py), and
#: their correct-process forms
NARROW = [p for p in STREAMED if narrows([p]) and not p.final()]
NARROW_CORRECT = [with_scope(p, "correct") for p in NARROW if p.scoped]
CAUSAL = ("causal-order", "latency", "realtime-latency")
PROCS = ["p0", "p1", "p2", "p3"]


def test_the_cut_serves_causal_order_and_latency():
    assert {p.name for p in NARROW} >= set(CAUSAL)
    assert narrows([properties()["agreement"]])  # test_stream_cut_owed.py


@pytest.fixture
def tiny(monkeypatch):
    """A window of 4 positions, 64 records read at a time, a buffer of 48 held records:
    every broken trace spills, and is cut if it can be."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 64)
    monkeypatch.setattr(spill, "SPILL_ROWS", 48)


def deps_run(n: int, fault: str, at: int, slow: int | None = None,
             seed: int = 0) -> list[dict]:
    """n messages, p0 and p1 sending in turn, each depending on the one before; p0 to p3
    deliver all in order, each delivery a quarter second after the send (p2's of message
    ``slow`` 100 s late); one fault at message ``at``; records merged at random."""
    local: dict[str, list[dict]] = {p: [] for p in PROCS}
    for i in range(n):
        s = PROCS[i % 2]
        deps = [f"m{i - 1}"] if i else []
        if fault == "on-tail" and i == at:  # a message of the cut depends on a tail one
            deps.append(f"m{n - 3}")
        if fault == "tail-on-gap" and i == at + 1:  # not on the message p3 skips ...
            deps = [f"m{at - 1}"]
        if fault == "missing" and i == at:  # on one never sent: the breach itself
            deps.append("ghost")
        if fault == "tail-missing" and i == n - 3:  # a second breach, in the tail
            deps.append("ghost")
        if fault == "on-retired" and i in (at + 1, n - 20):  # on m0, retired by then
            deps.append("m0")
        if fault == "tail-on-gap" and i == n - 3:  # ... but a tail message is
            deps.append(f"m{at}")
        local[s].append({"process": s, "kind": "send", "msg": f"m{i}", "deps": deps,
                         "time": float(i), "real_time": float(i)})
        for k, p in enumerate(PROCS):
            if fault in ("gap", "tail-on-gap") and p == "p3" and i == at:
                continue
            t = i + 0.25 + 0.01 * k + (100.0 if i == slow and p == "p2" else 0.0)
            local[p].append({"process": p, "kind": "deliver", "msg": f"m{i}", "time": t,
                             "real_time": t})
            if fault == "repeat" and p == "p2" and i == at + 1:
                local[p].append(dict(local[p][-2]))
    if fault in ("swap", "on-retired", "tail-missing"):  # p1 delivers m_at+1 before m_at
        d = [r for r in local["p1"] if r["kind"] == "deliver"]
        d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    rng = random.Random(seed)
    heads = {p: 0 for p in PROCS}
    out = []
    while any(heads[p] < len(local[p]) for p in PROCS):
        p = rng.choice([p for p in PROCS if heads[p] < len(local[p])])
        out.append(dict(local[p][heads[p]], trace="t"))
        heads[p] += 1
    return out


def decided(path, options: Options = Options(), props=NARROW) -> _Run:
    """The single pass's report is the whole-trace checker's; the run (how it decided)."""
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


#: faults the cut decides: the breach and its deps (on messages of the cut, on retired
#: ones, on one never sent) lie before it, the tail keeps the picture and reads deps on
#: the cut's messages every continuing process delivered
CUT = ["swap", "repeat", "gap", "missing", "on-retired"]
#: refused (the held path): a message of the cut depending on a tail message (c1), a
#: tail message depending on one a continuing process skipped (c2), a second breach in
#: the tail (a dependency never sent)
HELD = ["on-tail", "tail-on-gap", "tail-missing"]


@pytest.mark.parametrize("fault", CUT + HELD)
def test_planted_faults_early_with_deps_and_latency(fault, tiny, tmp_path):
    """Interleaved, decided on the cut or refused by its conditions; grouped by process
    (p1 to p3 read the retired prefix from disk, so the break sends it whole)."""
    n, at = (60 if fault in CUT else 160), 8  # HELD: past every cut tried
    recs = deps_run(n, fault, at, slow=at + 2)
    path = tmp_path / "i.jsonl"
    write_records(path, recs)
    run = decided(path, Options(latency_bound=50.0))
    assert run.modes == ({"slow": 1, "narrowed": 1} if fault in CUT else {"slow": 1}), \
        run.modes
    verdicts = {k: str(v) for k, v in run.report.outcomes[0].verdicts.items()}
    assert verdicts["latency"] == "violated"
    assert verdicts["causal-order"] == ("holds" if fault == "repeat" else "violated")
    if fault == "swap":
        write_records(path, by_process(recs))
        decided(path, Options(latency_bound=50.0))


@pytest.mark.parametrize("slow", ["before", "after", None])
def test_a_late_delivery_before_or_after_the_cut(slow, tiny, tmp_path):
    """The slowest delivery lies among the cut's records, in the tail (its witness read
    from the tail's tally, indexes counted from the trace's start), or is under the
    bound; the statistics (count, mean, per process) the whole trace's either way."""
    n, at = 60, 8
    where = {"before": at + 3, "after": n - 10, None: None}[slow]
    path = tmp_path / "t.jsonl"
    write_records(path, deps_run(n, "swap", at, slow=where, seed=1))
    for bound in (50.0, 1e9):
        run = decided(path, Options(latency_bound=bound))
        assert run.modes == {"slow": 1, "narrowed": 1}, run.modes


@pytest.mark.parametrize("condition", ["c1", "c2"])
def test_without_its_conditions_a_cut_would_differ(condition, tiny, monkeypatch, tmp_path):
    """c1 and c2 bear weight: waived, the cut is taken where the exact checks on its
    records differ from the whole trace's (a message of the cut depending on a tail
    message: "never delivers" instead of "only later, as #j"; a tail message depending
    on one p3 skipped: its violation past the cut unseen)."""
    path = tmp_path / "t.jsonl"
    write_records(path, deps_run(160, "on-tail" if condition == "c1" else "tail-on-gap", 8))
    if condition == "c1":
        monkeypatch.setattr(cutdeps.CutDeps, "_of_m",
                            lambda self, deps, rows, tail: setattr(self, "carried", True))
    else:
        monkeypatch.setattr(cutdeps.CutDeps, "_of_tail",
                            lambda self, deps, rows: setattr(self, "tail_carried", True))
    with pytest.raises(AssertionError):
        decided(path)


def test_deps_only_past_the_cut_are_refused(tiny, tmp_path):
    """c3: the sends of the cut's messages carry no deps, the tail's do: the cut's records
    alone would read the relation as not logged, so the held records decide."""
    recs = deps_run(60, "swap", 8)
    for r in recs:
        if r["kind"] == "send" and int(r["msg"][1:]) < 50:
            del r["deps"]
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    assert decided(path).modes == {"slow": 1}


def with_deps_and_times(recs: list[dict]) -> list[dict]:
    """A view run's sends given deps on the message sent before, and every record a time:
    its place in the list (so a delivery long after its send is slow)."""
    out, last = [], None
    for i, r in enumerate(recs):
        r = dict(r, time=float(i), real_time=float(i))
        if r["kind"] == "send":
            r["deps"] = [last] if last else []
            last = r["msg"]
        out.append(r)
    return out


@pytest.mark.parametrize("fault", ["swap", "gap", "repeat", "fifo", "next-view"])
def test_planted_view_faults_early_with_deps_and_latency(fault, tiny, monkeypatch,
                                                        tmp_path):
    """viewheld's membership run (a late joiner, a crash, a leave) with deps and times, a
    fault a tenth into p1's deliveries after positions retired: decided on the cut, each
    process's retired prefix carried over; a late joiner owes nothing sent before it
    joined (causal.py's membership rule, read on both sides of the cut alike)."""
    short = broken.membership_run
    monkeypatch.setattr(broken, "membership_run", lambda: short(9, 10))
    monkeypatch.setattr(driver, "READ_ROWS", 32)  # positions retire before the break
    monkeypatch.setattr(spill, "SPILL_ROWS", 24)
    recs = with_deps_and_times(broken.plant(fault, 0.1))
    path = tmp_path / "i.jsonl"
    write_records(path, recs)
    run = decided(path, Options(latency_bound=30.0))
    assert run.modes == {"slow": 1, "narrowed": 1, "views carried": 1}, run.modes
    if fault == "swap":  # the correct-process scope (p3 crashes); grouped, within the bound
        decided(path, Options(latency_bound=30.0, scope="correct"), NARROW_CORRECT)
        write_records(path, by_process(recs))
        decided(path, Options(latency_bound=1e9))


def test_a_tail_dependency_on_an_unsent_message_of_the_cut(tiny, monkeypatch, tmp_path):
    """p1 delivers a message nobody sent (in the cut's messages), and a message late in
    the run depends on it: every other process owes it (it has no sending view to excuse
    them: causal.py) and never delivers it, so the whole trace's first violation lies
    past their cuts: the cut is refused (c2 reads an unsent message as owed by all)."""
    short = broken.membership_run
    monkeypatch.setattr(broken, "membership_run", lambda: short(9, 10))
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 32)
    monkeypatch.setattr(spill, "SPILL_ROWS", 24)
    recs = with_deps_and_times(broken.plant("unsent", 0.1))
    late = [r for r in recs if r["kind"] == "send"][-5]
    late["deps"] = ["ghost"]
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path, Options(latency_bound=30.0))
    assert run.modes == {"slow": 1, "views carried": 1}, run.modes
    res = run.report.outcomes[0].results["causal-order"]
    assert "never delivers ghost" in res.explanation and late["msg"] in res.explanation


def membership_breach(fault: str, at: float) -> list[dict]:
    """The membership run (10 messages a view) with deps and times, and a breach among its
    membership records at fraction ``at`` of p1's deliveries: p1 installs its next view
    with other members ("members"), with members that leave it out ("self"), or twice."""
    if fault in ("members", "twice"):
        return with_deps_and_times(broken.plant(fault, at))
    recs = broken.membership_run(9, 10)
    d = [i for i, r in enumerate(recs) if r["kind"] == "deliver" and r["process"] == "p1"]
    nv = next(j for j in range(d[int(at * len(d))], len(recs))
              if recs[j]["kind"] == "view" and recs[j]["process"] == "p1")
    recs[nv] = dict(recs[nv], members=[p for p in recs[nv]["members"] if p != "p1"])
    return with_deps_and_times(recs)


@pytest.mark.parametrize("fault", ["members", "self", "twice"])
def test_a_breach_among_the_membership_records(fault, tiny, monkeypatch, tmp_path):
    """A member-set breach (two member sets for one view id, an installer left out of its
    view's members) early in the run: view agreement judges it on the cut's records, the
    tail leaves member sets unjudged and keeps the picture: decided on the cut; so is a
    view installed again at once (read as one install by the tail; the membership
    breaches that keep the held path: test_stream_cut_refusals.py)."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 32)  # positions retire before the break
    monkeypatch.setattr(spill, "SPILL_ROWS", 24)
    path = tmp_path / "t.jsonl"
    write_records(path, membership_breach(fault, 0.1))
    run = decided(path, Options(latency_bound=30.0))
    assert run.modes == {"slow": 1, "views carried": 1, "narrowed": 1}, run.modes
    bad = {k for k, v in run.report.outcomes[0].verdicts.items() if str(v) == "violated"}
    assert "view-agreement" in bad


def test_the_generators_faults_with_deps_and_a_bound(tiny, tmp_path):
    """Every fault of traces/generate.py (their sends carry deps, their records times), one
    trace each in one file, with the slow fault's bound: the whole-trace
    report (their faults lie anywhere in short runs: decided on the held records, as
    every held record is there the cut's)."""
    recs, bound = [], None
    for fault in sorted(FAULTS):
        got, truth = faulty_trace(f"t-{fault}", fault, seed=1, n_messages=16)
        recs += got
        bound = truth.get("bound", bound)
    path = tmp_path / "g.jsonl"  # grouped by trace, interleaved within each
    write_records(path, recs)
    decided(path, Options(latency_bound=bound))


@st.composite
def causal_timed_runs(draw):
    """One sequence delivered by every process, each send with deps on a few earlier
    messages (now and then a later one, or one never sent) and a time, deliveries now and
    then swapped, repeated, skipped or late, processes' records merged at random."""
    procs = [f"p{i}" for i in range(draw(st.integers(2, 4)))]
    n = draw(st.integers(8, 40))
    order = [f"m{i}" for i in range(n)]
    local: dict[str, list[dict]] = {p: [] for p in procs}
    for i, m in enumerate(order):
        s = draw(st.sampled_from(procs))
        deps = [order[j] for j in draw(st.lists(st.integers(max(0, i - 3), max(0, i - 1)),
                                                max_size=2)) if j < i]
        if draw(st.integers(0, 20)) == 0:
            deps.append(draw(st.sampled_from(order + ["ghost"])))
        local[s].append({"process": s, "kind": "send", "msg": m, "deps": deps,
                         "time": float(i)})
    for p in procs:
        seq = list(order)
        for _ in range(draw(st.integers(0, 2))):
            i = draw(st.integers(0, len(seq) - 2))  # a gap shortens it: at least n - 2
            f = draw(st.sampled_from(["swap", "repeat", "gap"]))
            if f == "swap":
                seq[i], seq[i + 1] = seq[i + 1], seq[i]
            elif f == "repeat":
                seq.insert(i + 1, seq[i])
            else:
                del seq[i]
        late = draw(st.integers(0, 2 * n))
        local[p] += [{"process": p, "kind": "deliver", "msg": m,
                      "time": int(m[1:]) + 0.5 + (30.0 if k == late else 0.0)}
                     for k, m in enumerate(seq)]
    return merge(draw, local)


@given(causal_timed_runs(), st.sampled_from([2, 4]), st.booleans(), st.sampled_from([3, 8]))
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_runs_agree_when_cut(tmp_path_factory, records, trim, grouped, rows):
    with small_windows(trim, rows, 4):
        path = tmp_path_factory.mktemp("c") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        decided(path, Options(latency_bound=10.0))


def test_an_early_breach_with_deps_and_a_bound_stays_flat(monkeypatch, tmp_path):
    """A run with deps and a latency bound broken at its start (p1's deliveries 12 and 13
    swapped), and the same run four times as long: the whole run is held (spilled), and
    the exact checks read the records of the same few messages for both (the shorter
    compared with the whole-trace checker, the longer's verdicts as the shorter's)."""
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    monkeypatch.setattr(driver, "READ_ROWS", 256)
    monkeypatch.setattr(spill, "SPILL_ROWS", 512)
    read = records_read(monkeypatch)
    options = Options(latency_bound=50.0)
    sizes, verdicts = [], []
    for n in (400, 1600):
        path = tmp_path / f"t{n}.jsonl"
        write_records(path, deps_run(n, "swap", 12, slow=n - 30))
        run = _Run(NARROW, options, False)
        if n == 500:
            agree([path], NARROW, options, run=run)
        else:
            check_stream([path], NARROW, options, run=run)
        assert run.modes == {"slow": 1, "narrowed": 1}, run.modes
        assert run.peak_held > 4 * n  # the run was held ...
        verdicts.append({k: str(v) for k, v in run.report.outcomes[0].verdicts.items()})
        sizes.append(read[-1])
    assert sizes[0] == sizes[1] and sizes[0] < 200, sizes  # ... what was read was not
    assert verdicts[0] == verdicts[1]
    assert verdicts[0]["causal-order"] == verdicts[0]["latency"] == "violated"
