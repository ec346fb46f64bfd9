"""The end-of-trace properties across the cut (checker/stream/cutowed.py): a trace broken
early and checked for agreement, validity, liveness or member liveness is decided on the
cut's records and the tail's clean pass, with the whole-trace checker's verdicts,
witnesses and sentences. Planted breaches early in a run, with end-of-trace violations
before and after the cut (a process that stops short, a message nobody delivers, a
message only one process delivers), without views and with a late joiner, a crash and a
leave; both layouts, both scopes; the generators' faults; Hypothesis-made runs; which
path decided; the refusals (condition A); and the records the exact checks read staying
flat as the run grows."""

from __future__ import annotations

import pytest
import test_stream_views_broken as broken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import STREAMED, agree, by_process, records_read, small_windows

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.spill as spill
from tomkit.checker.properties import Options, properties, with_scope
from tomkit.checker.stream.cutowed import OWED, Owed, owing
from tomkit.checker.stream.driver import _Run, check_stream
from tomkit.checker.stream.narrow import narrows
from tomkit.traces.generate import faulty_trace
from tomkit.traces.writer import write_records

#: what --liveness asks (the default properties, agreement, validity, liveness), member
#: liveness, and agreement in the correct-process scope
LIVENESS = [properties()[n] for n in ("integrity", "total-order-weak", "total-order-strong",
                                      "global-order", "agreement", "validity", "liveness")]
MEMBER = [properties()[n] for n in ("integrity", "fifo-order", "member-liveness")]
CORRECT = [with_scope(properties()["agreement"], "correct"), properties()["validity"]]
END = [p for p in STREAMED if p.final()]


@pytest.fixture
def tiny(monkeypatch):
    """A buffer of 6 held records, 8 records read at a time: every broken trace spills,
    and so is cut if it can be; a window that retires nothing before an early breach."""
    monkeypatch.setattr(canon, "TRIM_AT", 1 << 14)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)


def decided(path, props, options=Options()) -> _Run:
    """The single pass's report is the whole-trace checker's; the run (how it decided)."""
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


def across(run: _Run) -> bool:
    """Decided on the cut (its end-of-trace properties with the tail's pass), not on
    every held record, not whole."""
    return run.modes.get("narrowed") == 1 and not run.whole


def plain_run(n: int, breach: str, end: str, at: int = 3) -> list[dict]:
    """n messages, p0 and p1 sending in turn, p0 to p3 delivering all in order, with a
    breach among the deliveries early (at message ``at``) and an end-of-trace fault:
    ``stop`` p3 stops 3 messages short of the end, ``nobody`` p0's last message is
    delivered by none, ``alone`` the last message by p1 only, ``none``: nothing."""
    procs, senders = ["p0", "p1", "p2", "p3"], ["p0", "p1"]
    local: dict[str, list[dict]] = {p: [] for p in procs}
    last0 = max(i for i in range(n) if i % 2 == 0)
    for i in range(n):
        s = senders[i % 2]
        local[s].append({"process": s, "kind": "send", "msg": f"m{i}"})
        if breach == "double-send" and i == at:
            local["p2"].append({"process": "p2", "kind": "send", "msg": f"m{i}"})
        for p in procs:
            if (breach == "gap" and p == "p3" and i == at) or \
                    (end == "stop" and p == "p3" and i >= n - 3) or \
                    (end == "nobody" and i == last0) or \
                    (end == "alone" and i == n - 1 and p != "p1"):
                continue
            local[p].append({"process": p, "kind": "deliver", "msg": f"m{i}"})
            if breach == "repeat" and p == "p2" and i == at + 1:
                local[p].append({"process": p, "kind": "deliver", "msg": f"m{at}"})
    if breach == "swap":
        d = [r for r in local["p1"] if r["kind"] == "deliver"]
        d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    if breach == "fifo":
        s = [r for r in local["p0"] if r["kind"] == "send"]
        s[at // 2]["msg"], s[at // 2 + 1]["msg"] = s[at // 2 + 1]["msg"], s[at // 2]["msg"]
    out = []
    for i in range(max(len(r) for r in local.values())):  # round by round
        for p in procs:
            if i < len(local[p]):
                out.append(dict(local[p][i], trace="t"))
    return out


BREACHES = ["swap", "repeat", "gap", "fifo", "double-send"]
#: each breach with one end-of-trace fault after the cut (the swap with each)
PLAIN = [("swap", e) for e in ("none", "stop", "nobody", "alone")] + \
    [("repeat", "stop"), ("gap", "nobody"), ("fifo", "alone"), ("double-send", "stop")]
VIOLATED = {"none": set(), "stop": {"agreement", "liveness", "member-liveness"},
            "nobody": {"validity", "liveness", "member-liveness"},
            "alone": {"agreement", "liveness", "member-liveness"}}


@pytest.mark.parametrize("breach,end", PLAIN)
def test_early_breaches_without_views(breach, end, tiny, tmp_path):
    """A breach early, an end-of-trace fault after the cut: decided across the cut, the
    whole-trace checker's report, the tail's violations reported."""
    path = tmp_path / "t.jsonl"
    write_records(path, plain_run(60, breach, end))
    run = decided(path, LIVENESS + MEMBER)
    assert across(run), run.modes
    verdicts = run.report.outcomes[0].verdicts
    bad = {k for k, v in verdicts.items() if k in OWED and str(v) == "violated"}
    assert bad == VIOLATED[end] if breach == "swap" else VIOLATED[end] <= bad, bad


def test_after_positions_retired_without_views(tiny, monkeypatch, tmp_path):
    """A window of 4 positions: positions retired before the breach (every process
    delivered them, none crashed, each has a held record: cutowed.py, "A retired prefix
    without views"), decided across the cut, not whole; a process whose records all
    retired (it stops after the prefix) sends the trace whole, as before."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    for breach, end, at in (("swap", "stop", 20), ("repeat", "nobody", 20)):
        path = tmp_path / f"{breach}.jsonl"
        write_records(path, plain_run(60, breach, end, at))
        assert across(decided(path, LIVENESS + MEMBER))
    recs = plain_run(60, "swap", "none", 30)
    d3 = [i for i, r in enumerate(recs) if r["process"] == "p3"]
    path = tmp_path / "gone.jsonl"
    write_records(path, [r for i, r in enumerate(recs) if r["process"] != "p3" or i <= d3[5]])
    run = decided(path, LIVENESS)
    assert run.whole and "narrowed" not in run.modes, run.modes


def test_both_layouts_scopes_and_member_liveness_without_views(tiny, tmp_path):
    recs = plain_run(60, "swap", "stop")
    path, grouped = tmp_path / "i.jsonl", tmp_path / "g.jsonl"
    write_records(path, recs)
    write_records(grouped, by_process(recs))
    assert across(decided(path, CORRECT, Options(scope="correct")))
    assert across(decided(path, MEMBER))
    decided(grouped, LIVENESS + MEMBER)  # grouped: p1's swap is read first, whole or cut


def test_a_process_that_delivers_nothing_of_the_tail(tiny, tmp_path):
    """Condition A: p3 stops inside the breach's messages (it has no record in the
    tail); without views the tail's summary is told of it (cutowed.py, "A process silent
    in the tail"), and the cut is taken for the end-of-trace properties too
    (test_stream_cut_scope.py has more)."""
    recs = plain_run(60, "swap", "none")
    d3 = [i for i, r in enumerate(recs) if r["process"] == "p3" and r["kind"] == "deliver"]
    recs = [r for i, r in enumerate(recs) if not (r["process"] == "p3" and i > d3[5])]
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    assert across(decided(path, LIVENESS[:4]))
    run = decided(path, LIVENESS)
    assert across(run), run.modes


def test_a_crash_without_views_keeps_the_held_path(tiny, tmp_path):
    """Without views the cut reads sends and deliveries only (narrow.py's condition 4)."""
    recs = plain_run(60, "swap", "none")
    recs.append({"trace": "t", "process": "p3", "kind": "crash"})
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path, LIVENESS)
    assert "narrowed" not in run.modes and not run.whole


@pytest.fixture
def longer(monkeypatch):
    """viewheld's test run (p0-p3 from the start, p4 joins at the fourth view, p3, a
    sender, crashes in the sixth, p2 leaves after the eighth) with 10 messages a view."""
    short = broken.membership_run
    monkeypatch.setattr(broken, "membership_run", lambda: short(9, 10))


def _drop(recs: list[dict], keep) -> list[dict]:
    return [r for r in recs if keep(r)]


#: end-of-trace faults after the cut in the view run
VIEW_ENDS = {
    "none": lambda r: True,
    # p0 never delivers the last message, which p1 delivers
    "stop": lambda r: not (r["kind"] == "deliver" and r["msg"] == "m89" and r["process"] == "p0"),
    # nobody delivers the last message (its sender is correct)
    "nobody": lambda r: not (r["kind"] == "deliver" and r["msg"] == "m89"),
}


@pytest.mark.parametrize("breach,end", [("swap", "stop"), ("swap", "nobody"),
                                        ("repeat", "none")])
def test_early_breaches_with_views(breach, end, tiny, longer, monkeypatch, tmp_path):
    """A tenth into p1's deliveries, with a late joiner, a crashed sender and a leaver:
    with a window that retired positions before the breach (each process's retired
    prefix carried over, viewheld.py) and with one that did not, decided across the cut
    with the whole-trace checker's report; member liveness too when nothing retired
    (after positions retired, the late joiner's retired positions send it whole:
    viewheld.py's ``stands``)."""
    path = tmp_path / "t.jsonl"
    write_records(path, _drop(broken.plant(breach, 0.1), VIEW_ENDS[end]))
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    run = decided(path, LIVENESS)
    assert across(run) and run.modes["views carried"] == 1, run.modes
    monkeypatch.setattr(canon, "TRIM_AT", 1 << 14)
    run = decided(path, LIVENESS + MEMBER)
    assert across(run), run.modes
    verdicts = run.report.outcomes[0].verdicts
    want = {"none": set(), "stop": {"agreement", "liveness", "member-liveness"},
            "nobody": {"validity", "liveness", "member-liveness"}}[end]
    assert {k for k, v in verdicts.items() if k in OWED and str(v) == "violated"} == want


def test_views_both_layouts_and_scopes(tiny, longer, monkeypatch, tmp_path):
    recs = _drop(broken.plant("swap", 0.1), VIEW_ENDS["stop"])
    path, grouped = tmp_path / "i.jsonl", tmp_path / "g.jsonl"
    write_records(path, recs)
    write_records(grouped, by_process(recs))
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    assert across(decided(path, CORRECT, Options(scope="correct")))
    decided(grouped, LIVENESS + MEMBER)


def test_the_generators_faults(tiny, tmp_path):
    """The generators' faults (each its own trace), with and without views, both
    layouts, every end-of-trace property asked: the whole-trace checker's report."""
    recs = []
    for fault, views in (("swap", False), ("lost", True), ("wrong-view", True)):
        recs += faulty_trace(f"t-{fault}-{views}", fault, seed=1, n_messages=24,
                             views=views)[0]
    for layout, rs in (("i", recs), ("g", by_process(recs))):
        path = tmp_path / f"{layout}.jsonl"
        write_records(path, rs)
        decided(path, LIVENESS + MEMBER)


@st.composite
def broken_runs(draw) -> list[dict]:
    """A plain run with a breach early and each process stopping at a random count near
    the end; the last message delivered by a random few."""
    n = draw(st.integers(20, 40))
    recs = plain_run(n, draw(st.sampled_from(BREACHES)), "none", draw(st.integers(1, 5)))
    stop = {p: draw(st.integers(n - 4, n)) for p in ("p0", "p1", "p2", "p3")}
    seen = {p: 0 for p in stop}
    out = []
    for r in recs:
        if r["kind"] == "deliver":
            seen[r["process"]] += 1
            if seen[r["process"]] > stop[r["process"]]:
                continue
        out.append(r)
    return out


@given(broken_runs(), st.booleans())
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_runs_agree(tmp_path_factory, records, grouped):
    with small_windows(1 << 14, 8, 6):
        path = tmp_path_factory.mktemp("h") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        decided(path, LIVENESS + MEMBER)


def test_merge_orders_the_two_sides_as_the_exact_checks_scan():
    """The first violation by deliverer (agreement), by message id (liveness); a tie of
    deliverers goes to the cut's side; the tail's indexes are shifted past M's; a
    tail without sends holds; both sides undecided cannot be ordered."""
    from tomkit.checker.result import Result, Verdict, WitnessEvent

    def res(name, verdict, *wit, why=""):
        return Result(name, "t", verdict, list(wit), why)

    def ev(p, kind, m=None, i=None):
        return WitnessEvent(p, kind, m, i, None)

    last = {"p2": ev("p2", "deliver", "zz")}
    tail = res("agreement", Verdict.VIOLATED, ev("p0", "deliver", "m9", 2), ev("p2", "send"))
    owed = Owed({"agreement": tail}, {"p0": 5}, {})
    held = res("agreement", Verdict.VIOLATED, ev("p1", "deliver", "m1", 0), ev("p2", "send"))
    got = owed.merge("agreement", Verdict.VIOLATED, held, last)
    assert got.witness == [ev("p0", "deliver", "m9", 7), last["p2"]]  # p0 before p1
    held = res("agreement", Verdict.VIOLATED, ev("p0", "deliver", "m1", 0), ev("p2", "send"))
    assert owed.merge("agreement", Verdict.VIOLATED, held, last).witness[0].msg == "m1"
    assert owed.merge("agreement", Verdict.HOLDS, None, last).witness[0].index == 7
    tail = res("liveness", Verdict.VIOLATED, ev("p0", "send", "a9", 0), ev("p2", "send"))
    owed = Owed({"liveness": tail}, {}, {"p0": 3})
    held = res("liveness", Verdict.VIOLATED, ev("p1", "send", "b1", 0), ev("p2", "send"))
    assert owed.merge("liveness", Verdict.VIOLATED, held, last).witness[0] == \
        ev("p0", "send", "a9", 3)
    none = res("validity", Verdict.UNKNOWN, why="no send events: nothing to judge")
    owed = Owed({"validity": none}, {}, {})
    assert owed.merge("validity", Verdict.HOLDS, None, last).verdict == Verdict.HOLDS
    odd = res("member-liveness", Verdict.UNKNOWN, why="cannot tell")
    owed = Owed({"member-liveness": odd}, {}, {})
    assert owed.merge("member-liveness", Verdict.UNKNOWN, odd, last) is None
    assert owing(STREAMED) == END and OWED == {p.name for p in END}
    assert narrows(LIVENESS + MEMBER)


def read_by_cut(monkeypatch) -> list[int]:
    """The records each exact check reads, as they are read."""
    return records_read(monkeypatch)


@pytest.mark.parametrize("views", [False, True])
def test_an_early_breach_is_checked_on_records_that_stay_flat(views, monkeypatch, tmp_path):
    """A run broken early, checked with --liveness and member liveness, and the same run
    four times as long: the whole run is held (spilled), and the exact checks read the
    records around the breach (and the membership records), as many for both; the
    longer run's p3 stops short at its end, a violation only the tail's pass sees."""
    monkeypatch.setattr(canon, "TRIM_AT", 1 << 14)
    monkeypatch.setattr(driver, "READ_ROWS", 500)
    monkeypatch.setattr(spill, "SPILL_ROWS", 1_000)
    read = read_by_cut(monkeypatch)
    props = LIVENESS + MEMBER[2:]
    sizes = []
    for scale in (1, 4):
        if views:
            recs = broken.membership_run(9, 25 * scale)
            d = [i for i, r in enumerate(recs) if r["kind"] == "deliver" and r["process"] == "p1"]
            a, b = d[40], d[41]
            recs[a]["msg"], recs[b]["msg"] = recs[b]["msg"], recs[a]["msg"]
        else:
            recs = plain_run(250 * scale, "swap", "stop" if scale > 1 else "none", 40)
        path = tmp_path / f"t{scale}.jsonl"
        write_records(path, recs)
        run = _Run(props, Options(), False)
        if scale == 1:
            agree([path], props, run=run)
        else:
            report = check_stream([path], props, run=run)
            bad = {k for k, v in report.outcomes[0].verdicts.items() if str(v) == "violated"}
            assert ({"agreement", "liveness", "member-liveness"} - bad) == \
                (set() if not views else {"agreement", "liveness", "member-liveness"}), bad
        assert across(run), run.modes
        assert run.peak_held > len(recs) // 2  # the run was held ...
        sizes.append((len(recs), read[-1]))
    (n0, r0), (n1, r1) = sizes
    assert n1 > 3.5 * n0 and r1 == r0, sizes  # ... and what the exact checks read is not
