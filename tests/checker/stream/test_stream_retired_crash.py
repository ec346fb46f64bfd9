"""The end-of-trace properties of a trace broken after positions retired, when a process
delivered less of the retired prefix than the others (checker/stream/prefixowed.py):
without views a process that crashed there or one behind it (it only sends, first seen
after positions retired), with views a member that missed retired positions (a member
from the start that skipped a view, one stalled in an early view). Each is decided in
the pass (on the held records, or across a cut) with the whole-trace checker's report
(tests/checker/stream/stream_oracle.py), where it went whole before: planted
end-of-trace faults (a process that delivers less, a message nobody delivers, a stalled
member) with an order breach, crashes early and late, both scopes, both layouts,
member liveness in both readings; the cases that still go whole; Hypothesis-made
runs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import agree, by_process, small_windows
from test_stream_behind import views_run

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.spill as spill
from tomkit.checker.properties import Options, properties, with_scope
from tomkit.checker.stream.driver import _Run
from tomkit.traces.writer import write_records

ORDER = [properties()[n] for n in ("integrity", "total-order-weak", "total-order-strong",
                                   "global-order", "prefix-order")]
END = [properties()[n] for n in ("agreement", "validity", "liveness", "member-liveness")]
CORRECT = [with_scope(properties()["agreement"], "correct"), properties()["liveness"]]
SLOT = Options(liveness_reading="slot")
OWED = {"agreement", "validity", "liveness", "member-liveness"}


@pytest.fixture
def window(monkeypatch):
    """A window of 4 positions (positions retire before the breach), 8 records a read."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 8)


def decided(path, props=ORDER + END, options=Options()) -> _Run:
    """The single pass's report is the whole-trace checker's; the run (how it decided)."""
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


def in_the_pass(run: _Run) -> bool:
    return not run.whole and run.modes.get("slow") == 1


def violated(run: _Run) -> set[str]:
    return {k.split("@")[0] for k, v in run.report.outcomes[0].verdicts.items()
            if k.split("@")[0] in OWED and str(v) == "violated"}


def plain(n: int = 48, *, crash: tuple[str, int] | None = None, behind: int | None = None,
          end: str = "none", at: int = 30) -> list[dict]:
    """n messages, p0 and p1 sending in turn, p0 to p3 delivering each right after its
    send (records in that order: what retires is what every process passed), p1's
    deliveries ``at`` and ``at + 1`` swapped (the breach). ``crash``: (process, k) it
    crashes after k deliveries; ``behind``: from message ``behind`` on p4 sends every
    fourth message and delivers nothing (seen after positions retired, it never passes
    them); ``end``: ``short`` p3 misses the last 3 messages, ``nobody`` the last message
    is delivered by none, ``stall`` p2 stops delivering 4 messages after the breach."""
    out: list[dict] = []
    got = {p: 0 for p in ("p0", "p1", "p2", "p3")}
    down: set[str] = set()
    for i in range(n):
        s = "p4" if behind is not None and i >= behind and i % 4 == 3 else ("p0", "p1")[i % 2]
        out.append({"trace": "t", "process": s, "kind": "send", "msg": f"m{i}"})
        for p in got:
            if p in down or (end == "short" and p == "p3" and i >= n - 3) or \
                    (end == "nobody" and i == n - 1) or \
                    (end == "stall" and p == "p2" and i >= at + 4):
                continue
            if crash is not None and p == crash[0] and got[p] == crash[1]:
                out.append({"trace": "t", "process": p, "kind": "crash"})
                down.add(p)
                continue
            out.append({"trace": "t", "process": p, "kind": "deliver", "msg": f"m{i}"})
            got[p] += 1
    d = [r for r in out if r["process"] == "p1" and r["kind"] == "deliver"]
    d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    return out


#: (crash, behind): a crash early (its deliveries retire), a crash after the breach, a
#: process behind, both
WHO = {"crash early": (("p2", 3), None), "crash late": (("p3", 40), None),
       "behind": (None, 10), "crash early and behind": (("p3", 5), 12)}
#: the end-of-trace properties violated by each end fault (besides the process behind's)
ENDS = {"none": set(), "short": {"agreement", "liveness", "member-liveness"},
        "nobody": {"validity", "liveness", "member-liveness"},
        "stall": {"agreement", "liveness", "member-liveness"}}


#: each end fault with a crash and with a process behind (not every pair: they cost)
PAIRS = [("crash early", e) for e in ("short", "nobody", "stall")] + \
    [("crash late", e) for e in ("none", "nobody")] + \
    [("behind", e) for e in ("none", "short", "stall")] + \
    [("crash early and behind", e) for e in ("nobody", "stall")]


@pytest.mark.parametrize("who,end", PAIRS)
def test_without_views_decided_in_the_pass(who, end, window, tmp_path):
    """Broken after positions retired, with a crash or a process behind the retired
    prefix and an end-of-trace fault: decided on the held records, not whole, with the
    whole-trace checker's report in both scopes (member liveness's readings differ only
    on joins: with views, below)."""
    crash, behind = WHO[who]
    if end in ("short", "stall") and crash and crash[0] == {"short": "p3", "stall": "p2"}[end]:
        crash = ("p3" if crash[0] == "p2" else "p2", crash[1])
    path = tmp_path / "t.jsonl"
    write_records(path, plain(crash=crash, behind=behind, end=end))
    run = decided(path)
    assert in_the_pass(run), run.modes
    want = ENDS[end] | ({"agreement", "validity", "liveness", "member-liveness"}
                        if behind is not None else set())
    assert violated(run) == want
    assert in_the_pass(decided(path, CORRECT, Options(scope="correct")))


def test_the_witnesses_lie_in_the_retired_prefix(window, tmp_path):
    """p4, behind, misses everything: agreement cites p0's first delivery, validity p4's
    first send, liveness m0's send, member liveness p0's first send, each read back from
    disk with its index and line."""
    recs = plain(crash=("p2", 3), behind=10)
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path)
    assert in_the_pass(run)
    res = run.report.outcomes[0].results
    # line 1 is the header
    line = {(r["process"], r["kind"], r.get("msg")): i + 2 for i, r in enumerate(recs)}
    for name, (p, kind, m, index) in {"agreement": ("p0", "deliver", "m0", 0),
                                      "validity": ("p4", "send", "m11", 0),
                                      "liveness": ("p0", "send", "m0", 0),
                                      "member-liveness": ("p0", "send", "m0", 0)}.items():
        w = res[name].witness[0]
        assert (w.process, w.kind, w.msg, w.index) == (p, kind, m, index), (name, w)
        assert w.location.line == line[(p, kind, m)]


def test_a_crashed_process_in_the_uniform_scope(window, tmp_path):
    """p0 crashes after 3 deliveries and p4, behind, misses them: uniform agreement's
    first deliverer is the crashed p0, whose witness delivery retired; in the correct
    scope the first correct deliverer's."""
    recs = plain(crash=("p0", 3), behind=10)
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path, END[:1])
    assert in_the_pass(run)
    res = run.report.outcomes[0].results["agreement"]
    assert res.explanation.startswith("crashed process p0 delivers m0")
    run = decided(path, CORRECT[:1], Options(scope="correct"))
    assert run.report.outcomes[0].results["agreement@correct"].witness[0].process == "p1"


def test_across_a_cut(window, monkeypatch, tmp_path):
    """A buffer of 6 records: the broken trace spills and is cut; a process behind the
    retired prefix no longer refuses the cut, its retired part merged with the cut's."""
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)
    path = tmp_path / "t.jsonl"
    write_records(path, plain(n=80, behind=10, end="short", at=24))
    run = decided(path)
    assert in_the_pass(run) and run.modes.get("narrowed") == 1, run.modes


def test_a_crashed_sender_does_not_hold_the_window(window, tmp_path):
    """p0 sends and crashes early; p1 sends the rest: p0's latest send, held by a sender
    that did not crash, no longer holds the window for the rest of the run (canon.py),
    and the run broken late is decided in the pass."""
    recs = []
    for r in plain(400, crash=("p0", 5), at=390):
        if r["kind"] == "send" and r["process"] == "p0" and int(r["msg"][1:]) > 5:
            r = dict(r, process="p1")
        recs.append(r)
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path)
    assert in_the_pass(run) and run.peak_window < 40, (run.modes, run.peak_window)


def test_both_layouts(window, tmp_path):
    """Grouped by process the run lags (read from disk), which a break sends whole
    (canon.py): the report is the whole-trace checker's either way."""
    for who in ("crash early", "behind"):
        crash, behind = WHO[who]
        recs = plain(crash=crash, behind=behind, end="short")
        path = tmp_path / "g.jsonl"
        write_records(path, by_process(recs))
        decided(path)


def test_what_still_goes_whole(window, tmp_path):
    """A process short of the retired prefix (crashed there, or behind it) that delivers
    after the break: its delivery lies in the retired prefix (prefix order's witness
    would be wrong on the held records); a process whose records all retired."""
    recs = plain(crash=("p2", 3))
    recs.append({"trace": "t", "process": "p2", "kind": "deliver", "msg": "m47"})
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    assert decided(path, ORDER).whole
    recs = plain(behind=10) + [{"trace": "t", "process": "p4", "kind": "deliver",
                                "msg": "m47"}]
    write_records(path, recs)
    assert decided(path).whole
    recs = []
    for r in plain(end="short"):  # p5 delivers the first 10 messages only: all retire
        recs.append(r)
        if r["process"] == "p0" and r["kind"] == "deliver" and int(r["msg"][1:]) < 10:
            recs.append(dict(r, process="p5"))
    write_records(path, recs)
    run = decided(path)
    assert run.whole, run.modes


# ---- with views: member liveness ------------------------------------------------------


def view_case(name: str, at: float = 0.8) -> list[dict]:
    """A view run broken (p1's deliveries swapped) at ``at`` of it, after positions
    retired, with a member that missed retired positions."""
    p4 = ["p0", "p1", "p2", "p3"]
    if name == "skips a view":  # JGroups' late joiner: no join record, first view 2
        recs = views_run(4, 8, p4, {"p3": {1, 2, 3}})
    elif name == "stalled in an early view":  # p3 stops 4 deliveries into view 2
        recs = views_run(4, 8, p4, {"p3": {0, 1}}, {"p3": 12})
    elif name == "stalled, then crashes":  # not correct: owed nothing, owes nothing
        recs = views_run(4, 8, p4, {"p3": {0, 1}}, {"p3": 12})
        i = max(i for i, r in enumerate(recs) if r["process"] == "p3")
        recs.insert(i + 1, {"process": "p3", "kind": "crash"})
    elif name == "every member delivers":
        recs = views_run(4, 8, p4)
    else:
        raise KeyError(name)
    recs = [dict(r, trace="t") for r in recs]
    d = [i for i, r in enumerate(recs) if r["process"] == "p1" and r["kind"] == "deliver"]
    a, b = d[int(at * len(d))], d[int(at * len(d)) + 1]
    recs[a]["msg"], recs[b]["msg"] = recs[b]["msg"], recs[a]["msg"]
    return recs


VIEWS = ["skips a view", "stalled in an early view", "stalled, then crashes",
         "every member delivers"]


@pytest.mark.parametrize("name", VIEWS)
def test_member_liveness_with_views(name, window, tmp_path):
    """Member liveness on a broken view trace whose member missed retired positions:
    decided in the pass (each process's retired prefix carried over), both readings; the
    other end-of-trace properties too."""
    path = tmp_path / "t.jsonl"
    write_records(path, view_case(name))
    run = decided(path)
    assert in_the_pass(run) and run.modes["views carried"] == 1, run.modes
    assert ("member-liveness" in violated(run)) == (name in VIEWS[:2])
    decided(path, END[-1:], SLOT)
    decided(path, CORRECT, Options(scope="correct"))


def test_a_join_after_the_break(window, tmp_path):
    """p3 stalled in view 2 crashes and joins again after the break: member liveness reads
    its latest join (after the break, from the held records) and the views since it, not
    what the pass knew at the break."""
    recs = view_case("stalled, then crashes", 0.5)
    recs += [{"trace": "t", "process": "p3", "kind": "join"},
             {"trace": "t", "process": "p3", "kind": "view", "view": "5",
              "members": ["p0", "p1", "p2", "p3"]}]
    recs += [{"trace": "t", "process": p, "kind": "view", "view": "5",
              "members": ["p0", "p1", "p2", "p3"]} for p in ("p0", "p1", "p2")]
    recs += [{"trace": "t", "process": "p0", "kind": "send", "msg": "last"}]
    recs += [{"trace": "t", "process": p, "kind": "deliver", "msg": "last"}
             for p in ("p0", "p1", "p2")]
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path)
    assert in_the_pass(run) and run.modes["views carried"] == 1, run.modes
    assert "member-liveness" in violated(run)  # p3 owes "last"


def test_views_grouped_by_process(window, tmp_path):
    for name in VIEWS[:2]:
        path = tmp_path / "g.jsonl"
        write_records(path, by_process(view_case(name)))
        decided(path)


# ---- Hypothesis ------------------------------------------------------------------------


@st.composite
def runs(draw) -> list[dict]:
    """A plain run with a breach at a random place, a crash at a random count, a process
    behind from a random message (or none), an end fault, random ids (so that liveness's
    first violation by id lies on either side of the retired prefix)."""
    n = draw(st.integers(24, 40))
    crash = draw(st.one_of(st.none(), st.tuples(st.sampled_from(["p0", "p2", "p3"]),
                                                st.integers(1, n - 2))))
    behind = draw(st.one_of(st.none(), st.integers(6, 16)))
    end = draw(st.sampled_from(sorted(ENDS)))
    at = draw(st.integers(8, n - 4))
    recs = plain(n, crash=crash, behind=behind, end=end, at=at)
    names = draw(st.permutations([f"x{i:02d}" for i in range(n)]))
    return [dict(r, msg=names[int(r["msg"][1:])]) if "msg" in r else r for r in recs]


@given(runs(), st.sampled_from([2, 4]), st.booleans(), st.booleans())
@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_runs(tmp_path_factory, records, trim, grouped, correct):
    with small_windows(trim, 8, 12):
        path = tmp_path_factory.mktemp("h") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        if correct:
            decided(path, CORRECT, Options(scope="correct"))
        else:
            decided(path)
