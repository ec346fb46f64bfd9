"""The cut after a breach in a trace with views (checker/stream/viewcut.py with
narrow.py): a view trace broken early whose held records spilled is checked on the
records around its breach and its membership records, the rest by a canonical pass
that replays the views, with the whole-trace checker's verdicts, witnesses and
sentences. Planted view faults early in a run with a late joiner, a crash and a leave
(both layouts, both scopes, broken before and after positions retired), the generators'
view faults, the real systems' fixtures, Hypothesis-made view runs; which path decided;
condition 5v's refusals; and the records the exact checks read staying flat as the run
grows."""

from __future__ import annotations

import pytest
import test_stream_views_broken as broken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import CORRECT, STREAMED, agree, by_process, records_read, small_windows
from test_stream_views import REAL, read_gz, view_runs

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.reduced as reduced
import tomkit.checker.stream.spill as spill
import tomkit.checker.stream.viewcut as viewcut
from tomkit.checker.properties import Options
from tomkit.checker.stream.driver import _Run, check_stream
from tomkit.checker.stream.narrow import narrows
from tomkit.traces.generate import faulty_trace
from tomkit.traces.writer import write_records

#: the properties the cut keeps on its own records (the end-of-trace ones with the
#: tail's clean pass: test_stream_cut_owed.py), and their correct-process forms
NARROW = [p for p in STREAMED if narrows([p]) and not p.final()]
NARROW_CORRECT = [p for p in CORRECT if narrows([p]) and not p.final()]
#: faults among the deliveries and sends: the rest of the run keeps the picture, so the
#: cut holds; so does two member sets for one view id (view agreement judges it on the
#: cut's records, the tail leaves member sets unjudged: cutdeps.py), and a view
#: installed again at once (read as one install by the tail; the breaches among the
#: membership records that keep the held path: test_stream_cut_refusals.py)
CUT = ["swap", "gap", "repeat", "unsent", "fifo", "double-send", "next-view",
       "moves-on-short", "members", "twice"]


@pytest.fixture
def tiny(monkeypatch):
    """A buffer of 6 held records, 8 records read at a time: every broken trace spills,
    and so is cut if it can be; views open and close within a short run."""
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)


@pytest.fixture
def longer(monkeypatch):
    """viewheld's test run (p4 joins at the fourth view, p3 crashes in the sixth, p2
    leaves after the eighth) with 10 messages a view."""
    short = broken.membership_run
    monkeypatch.setattr(broken, "membership_run", lambda: short(9, 10))


@pytest.fixture
def cut(monkeypatch) -> list[str]:
    """The traces whose exact checks ran on a cut (narrow.py's ``narrowed``)."""
    out: list[str] = []
    narrowed = reduced.narrowed

    def noted(state, *a):
        kept = narrowed(state, *a)
        if kept is not None:
            out.append(state.id)
        return kept

    monkeypatch.setattr(reduced, "narrowed", noted)
    return out


def decided(path, props=NARROW, options=Options()) -> _Run:
    """The single pass's report is the whole-trace checker's; the run (how it decided)."""
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


@pytest.mark.parametrize("fault", CUT)
def test_planted_view_faults_early(fault, tiny, longer, monkeypatch, tmp_path):
    """A tenth into p1's deliveries, after positions retired: a fault among deliveries and
    sends is decided on the cut (not on every held record, not whole), each process's
    retired prefix carried over; so is a view installed again at once."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    path = tmp_path / "i.jsonl"
    write_records(path, broken.plant(fault, 0.1))
    run = decided(path)
    assert run.modes == {"slow": 1, "narrowed": 1, "views carried": 1}, run.modes


def test_an_early_swap_in_both_scopes_layouts_and_windows(tiny, longer, cut, monkeypatch,
                                                        tmp_path):
    """The swap again: in the correct-process scope, grouped by process, and with a
    window that retires nothing before the break (cut without a retired prefix)."""
    recs = broken.plant("swap", 0.1)
    path, grouped = tmp_path / "i.jsonl", tmp_path / "g.jsonl"
    write_records(path, recs)
    write_records(grouped, by_process(recs))
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    decided(path, NARROW_CORRECT, Options(scope="correct"))
    # grouped, p1's swap lies in the part it reads from disk (a break after a lag goes
    # whole); with the lag off, nothing retires before the break and the trace is cut
    assert decided(grouped).modes == {"whole": 1}
    monkeypatch.setattr(canon, "VIEW_LAG", False)
    decided(grouped)
    assert cut == ["t", "t"]  # both cut (grouped: nothing retired before the break)
    monkeypatch.setattr(canon, "TRIM_AT", 1 << 18)
    assert decided(path).modes == {"slow": 1, "narrowed": 1}


def test_every_property_asked_is_cut(tiny, longer, monkeypatch, tmp_path):
    """Every property asked, member liveness among them: the late joiner missed retired
    positions, which member liveness may owe it; those pairs are decided from each
    process's retired deliveries per view (prefixowed.py), so the broken view trace is
    cut, not sent whole (it went whole before; the end-of-trace properties across the
    cut: test_stream_cut_owed.py)."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    path = tmp_path / "t.jsonl"
    write_records(path, broken.plant("swap", 0.1))
    run = _Run(STREAMED, Options(), False)
    agree([path], STREAMED, run=run)
    assert run.modes.get("narrowed") == 1 and not run.whole, run.modes


def test_the_generators_view_faults(tiny, monkeypatch, tmp_path):
    """A few of the generators' faults with views (each its own trace, one file), both
    layouts: the whole-trace report (every fault of them, with the held path:
    test_stream_views_broken.py)."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    recs = []
    for fault in ("swap", "wrong-view"):
        recs += faulty_trace(f"t-{fault}", fault, seed=1, n_messages=24, views=True)[0]
    for layout, rs in (("i", recs), ("g", by_process(recs))):
        path = tmp_path / f"{layout}.jsonl"
        write_records(path, rs)
        decided(path)


#: the real systems' runs whose breach the cut decides with a window of 2 positions (the
#: others keep the picture, are decided on their held records, or go whole; all agree:
#: docs/stream.md)
REAL_CUT = [p for p in REAL if p.name.split(".")[0] in
            ("etcd-kill-leader-s1", "nats-partition-leader-s3", "zookeeper-clean-s1")]


def test_the_real_systems_fixtures_that_are_cut(tiny, cut, monkeypatch, tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 2)
    assert len(REAL_CUT) == 3
    recs = [dict(r, trace=p.name.split(".")[0]) for p in REAL_CUT for r in read_gz(p)]
    path = tmp_path / "real.jsonl"
    write_records(path, recs)
    decided(path)
    assert sorted(cut) == sorted(p.name.split(".")[0] for p in REAL_CUT)


@given(view_runs(), st.sampled_from([2, 4, 1 << 18]), st.sampled_from([4, 16]),
       st.booleans(), st.sampled_from([2, 6, 20]))
@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_view_runs_agree_when_cut(tmp_path_factory, records, trim, rows, grouped,
                                             rows_spilled):
    if not records:
        return
    with small_windows(trim, rows, rows_spilled):
        path = tmp_path_factory.mktemp("v") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        decided(path)


def test_without_condition_5v_a_cut_would_differ(tiny, longer, monkeypatch, tmp_path):
    """Condition 5v bears weight: with it waived, the gap (p1 skips a message and goes on
    past its cut) is cut where the exact checks on the cut's records differ from the
    whole trace's (test_planted_view_faults_early: with it, they agree)."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    path = tmp_path / "t.jsonl"
    write_records(path, broken.plant("gap", 0.1))
    for part in ("_strong", "_prefix", "_fifo"):
        monkeypatch.setattr(viewcut, part, lambda *a: True)
    with pytest.raises(AssertionError):
        decided(path)


def read_by_cut(monkeypatch) -> list[int]:
    """The records each exact check reads, as they are read."""
    return records_read(monkeypatch)


def test_an_early_breach_is_checked_on_records_that_stay_flat(monkeypatch, tmp_path):
    """A view run broken early (p1's deliveries swapped half way into its second view), and
    the same run four times as long: the whole run is held (spilled), and the exact checks
    read the records around the breach and the membership records, as many for both (the
    shorter compared with the whole-trace checker, the longer's verdicts)."""
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    monkeypatch.setattr(driver, "READ_ROWS", 500)
    monkeypatch.setattr(spill, "SPILL_ROWS", 1_000)
    read = read_by_cut(monkeypatch)
    sizes = []
    for per_view in (100, 400):
        recs = broken.membership_run(9, per_view)
        d = [i for i, r in enumerate(recs) if r["kind"] == "deliver" and r["process"] == "p1"]
        a, b = d[150], d[151]  # in the second view, after positions retired
        recs[a]["msg"], recs[b]["msg"] = recs[b]["msg"], recs[a]["msg"]
        path = tmp_path / f"t{per_view}.jsonl"
        write_records(path, recs)
        if per_view == 100:
            run = decided(path)
        else:
            run = _Run(NARROW, Options(), False)
            report = check_stream([path], NARROW, run=run)
            bad = {k for k, v in report.outcomes[0].verdicts.items() if str(v) == "violated"}
            assert bad == {"total-order-weak", "total-order-strong", "global-order",
                           "prefix-order"}, bad
        assert run.modes == {"slow": 1, "narrowed": 1, "views carried": 1}, run.modes
        assert run.peak_held > len(recs) // 2  # the run was held ...
        sizes.append((len(recs), read[-1]))
    (n0, r0), (n1, r1) = sizes
    assert n1 > 3.5 * n0 and r1 == r0, sizes  # ... and what the exact checks read is not
