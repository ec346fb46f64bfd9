"""The cut in the correct-process scope (checker/stream/narrow.py's condition 4, read in
both scopes through cutdeps.py's ``sent_before``): a view run whose early messages (the
cut's, M) are sent only by a process that crashes later, while the processes that do
not crash send the rest. The correct-process scope judges the trace without the crashed
process's records (scope.py's ``in_scope``), so the cut's records hold no send there
while the whole trace holds the tail's: FIFO's *unknown* ("no send events logged")
would differ. Such a cut is refused (the held records decide); one sent by a correct
process too is taken. And a process silent in the tail (cutowed.py's condition A): one
that stops inside the breach, told to the tail's summary, so that the end-of-trace
properties are decided on the cut too. Each against the whole-trace checker, both
layouts."""

from __future__ import annotations

import pytest
import test_stream_cut_owed as owed
from stream_oracle import STREAMED, agree, by_process, without_silent_processes

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.cutdeps as cutdeps
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.narrow as narrow
import tomkit.checker.stream.spill as spill
from tomkit.checker.properties import Options, with_scope
from tomkit.checker.stream.driver import _Run
from tomkit.checker.stream.narrow import narrows
from tomkit.traces.writer import write_records

#: the properties the cut serves, the end-of-trace ones too, in both scopes; causal
#: order left out: its own c3 (cutdeps.py) refused such a cut before this condition did
NARROW = [p for p in STREAMED if narrows([p]) and p.name != "causal-order"]
NARROW_CORRECT = [with_scope(p, "correct") for p in NARROW if p.scoped]
PROCS = ["p0", "p1", "p2", "p3"]
CUT = {"slow": 1, "narrowed": 1, "views carried": 1}
HELD = {"slow": 1, "views carried": 1}


@pytest.fixture
def tiny(monkeypatch):
    """A window of 4 positions, 32 records read at a time, a buffer of 24 held records:
    positions retire before the breach, the broken trace spills and is cut if it can be."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 32)
    monkeypatch.setattr(spill, "SPILL_ROWS", 24)


def crashing_sender_run(n: int = 160, early: int = 100, at: int = 10,
                        fault: str = "swap", also: int | None = None) -> list[dict]:
    """p0 to p3 in view 1; p3 alone sends the first ``early`` messages (but message
    ``also``, sent by p0), then crashes, and p0 to p2 install view 2 and send the rest in
    turn; every member delivers each message right away. The breach lies among p3's
    messages, at p1's delivery ``at``: two deliveries swapped, or one repeated."""
    members = list(PROCS)
    out: list[dict] = []

    def rec(p: str, kind: str, **kw) -> None:
        out.append({"trace": "t", "process": p, "kind": kind, **kw})

    for p in members:
        rec(p, "view", view="1", members=list(members))
    for i in range(n):
        if i == early:
            rec("p3", "crash")
            members = ["p0", "p1", "p2"]
            for p in members:
                rec(p, "view", view="2", members=list(members))
        s = "p3" if i < early and i != also else members[i % len(members)]
        rec(s, "send", msg=f"m{i}")
        for p in members:
            rec(p, "deliver", msg=f"m{i}")
    d = [r for r in out if r["kind"] == "deliver" and r["process"] == "p1"]
    if fault == "swap":
        d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    else:  # a repeat
        out.insert(out.index(d[at]) + 1, dict(d[at]))
    return out


def decided(path, props, options: Options = Options()) -> _Run:
    """The single pass's report is the whole-trace checker's; the run (how it decided)."""
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


def verdict(run: _Run, name: str) -> str:
    return str(run.report.outcomes[0].verdicts[name])


@pytest.mark.parametrize("fault", ["swap", "repeat"])
@pytest.mark.parametrize("grouped", [False, True])
def test_messages_of_the_cut_sent_only_by_a_crashed_process(fault, grouped, tiny,
                                                            monkeypatch, tmp_path):
    """The cut's messages are all p3's, p3 crashes, p0 to p2 send the tail: refused in
    both scopes (the correct-process one reads no send among the cut's records), the held
    records decide, FIFO holding in the correct-process scope as on the whole trace."""
    recs = crashing_sender_run(fault=fault)
    path = tmp_path / "t.jsonl"
    write_records(path, by_process(recs) if grouped else recs)
    if grouped:  # nothing retires: a break after a process lagged goes whole
        monkeypatch.setattr(canon, "TRIM_AT", 1 << 14)
    # grouped by process nothing retires before the break; there a repeat's shift is
    # cut only at the run's end (every message in M, no tail sent)
    held = HELD if not grouped else \
        {"slow": 1, "narrowed": 1} if fault == "repeat" else {"slow": 1}
    run = decided(path, NARROW_CORRECT, Options(scope="correct"))
    assert run.modes == held, run.modes
    assert verdict(run, "fifo-order@correct") == "holds"
    assert verdict(run, "total-order-weak@correct") == \
        ("violated" if fault == "swap" else "holds")
    assert decided(path, NARROW).modes == held


@pytest.mark.parametrize("grouped", [False, True])
def test_a_cut_with_a_correct_sender_among_its_messages_is_taken(grouped, tiny, monkeypatch,
                                                                 tmp_path):
    """The same run with one message of the cut sent by p0 (which does not crash): the
    cut's records hold a send in the correct-process scope too, so the cut is taken."""
    path = tmp_path / "t.jsonl"
    recs = crashing_sender_run(also=12)
    write_records(path, by_process(recs) if grouped else recs)
    if grouped:  # nothing retires: a break after a process lagged goes whole
        monkeypatch.setattr(canon, "TRIM_AT", 1 << 14)
    cut = CUT if not grouped else {"slow": 1, "narrowed": 1}
    run = decided(path, NARROW_CORRECT, Options(scope="correct"))
    assert run.modes == cut, run.modes
    assert verdict(run, "total-order-weak@correct") == "violated"
    assert decided(path, NARROW).modes == cut


def test_read_unscoped_the_cut_would_differ(tiny, monkeypatch, tmp_path):
    """The condition bears weight: read on every sender (as before), the cut is taken
    and its records give FIFO "unknown" where the whole trace gives "holds"."""
    def unscoped(self, what=""):
        return bool(self.senders["m" + what]) or not self.senders["tail" + what]

    path = tmp_path / "t.jsonl"
    write_records(path, crashing_sender_run())
    with monkeypatch.context() as m:
        m.setattr(cutdeps.CutDeps, "sent_before", unscoped)
        with pytest.raises(AssertionError):
            decided(path, NARROW_CORRECT, Options(scope="correct"))
    assert decided(path, NARROW_CORRECT, Options(scope="correct")).modes == HELD


#: the end-of-trace properties with the order ones (test_stream_cut_owed.py), in both
#: scopes
OWED = owed.LIVENESS + owed.MEMBER
OWED_CORRECT = [with_scope(p, "correct") for p in OWED if p.scoped]


def stopping_run(end: str, stop: int) -> list[dict]:
    """test_stream_cut_owed.py's run without views (a swap at message 3, an end-of-trace
    fault ``end``), p3 stopping after its delivery ``stop``, inside the breach's
    messages: it has no record in the tail."""
    recs = owed.plain_run(60, "swap", end)
    d3 = [i for i, r in enumerate(recs) if r["process"] == "p3" and r["kind"] == "deliver"]
    return [r for i, r in enumerate(recs) if not (r["process"] == "p3" and i > d3[stop])]


@pytest.mark.parametrize("end,stop,trim", [("none", 5, 1 << 14), ("alone", 2, 1 << 14),
                                           ("nobody", 5, 4), ("stop", 2, 4)])
def test_a_process_silent_in_the_tail(end, stop, trim, monkeypatch, tmp_path):
    """cutowed.py's condition A, "A process silent in the tail": p3 stops inside the
    breach, so the tail's pass has no record of it; it is added to the tail's summary as
    a process that delivered nothing there, and the cut is taken for the end-of-trace
    properties too, with the whole-trace checker's report (agreement and liveness
    violated: p3 never delivers the tail's messages), in both scopes and layouts; with a
    window of 4 positions the tail's positions retire, and p3 is behind them (grouped by
    process, the trace's positions retire before the others' records come: a break
    after a lag goes whole, as before)."""
    monkeypatch.setattr(canon, "TRIM_AT", trim)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)
    recs = stopping_run(end, stop)
    for grouped in (False, True):
        path = tmp_path / f"{grouped}.jsonl"
        write_records(path, by_process(recs) if grouped else recs)
        for props, options in ((OWED, Options()), (OWED_CORRECT, Options(scope="correct"))):
            run = decided(path, props, options)
            if grouped and trim == 4:  # p1 to p3 lag behind retired positions: whole
                assert run.whole, run.modes
                continue
            assert run.modes.get("narrowed") == 1 and not run.whole, run.modes
            bad = {k.split("@")[0] for k, v in run.report.outcomes[0].verdicts.items()
                   if str(v) == "violated"}
            assert {"agreement", "liveness"} & bad == \
                ({"agreement"} if options.scope == "correct" else {"agreement", "liveness"})


def test_without_the_silent_process_the_tail_would_differ(monkeypatch, tmp_path):
    """The silent process bears weight: left out of the tail's summary (condition A read
    on the tail's own processes), the cut's report differs from the whole trace's."""
    monkeypatch.setattr(canon, "TRIM_AT", 1 << 14)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)
    path = tmp_path / "t.jsonl"
    write_records(path, stopping_run("none", 5))
    with monkeypatch.context() as m:
        m.setattr(narrow, "decide", without_silent_processes(narrow.decide))
        with pytest.raises(AssertionError):
            decided(path, OWED)
    assert decided(path, OWED).modes == {"slow": 1, "narrowed": 1}
