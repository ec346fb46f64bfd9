"""The end-of-trace properties (agreement, validity, liveness; member liveness) decided in
the single pass (checker/stream/ledger.py) against the whole-trace checker, with views,
joins, leaves and crashes: the same verdicts, witnesses and sentences, checked with
these properties alone (with every property, one that needs the whole trace would hide
a wrong verdict of theirs), on every planted view trace, the generators' faults, the
real systems' fixtures and Hypothesis-made runs, both layouts, windows of 2 to 4
positions; and a long view run with a liveness violation decided in the pass, in
bounded memory."""

from __future__ import annotations

import ast

import pytest
from budget import SEEDS, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from locations import TESTS
from stream_oracle import STREAMED, agree, by_process, merge, small_windows
from test_stream_differential import near_total_order
from test_stream_views import PLANTED, REAL, long_view_run, read_gz, view_runs
from tracedsl import parse

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.properties import Options, properties, with_scope
from tomkit.checker.stream.driver import _Run, check_stream
from tomkit.traces.generate import FAULTS, faulty_trace
from tomkit.traces.schema import KINDS
from tomkit.traces.writer import write_records

END = [properties()[n] for n in ("agreement", "validity", "liveness", "member-liveness")]
END_CORRECT = [with_scope(properties()["agreement"], "correct")]
SLOT = Options(liveness_reading="slot")


def agree_end(path) -> _Run:
    """The end-of-trace properties' report is the whole-trace checker's, in both scopes;
    the run of the uniform scope (how it was decided)."""
    run = _Run(END, Options(), False)
    agree([path], END, run=run)
    agree([path], END_CORRECT, Options(scope="correct"))
    agree([path], END[-1:], SLOT)
    return run


def planted_membership_traces() -> list[tuple[str, str]]:
    """Every hand-written trace in tests/checker/'s modules with a view, join, leave or
    crash record (the membership properties' planted faults and clean cases)."""
    out = []
    for path in sorted((TESTS / "checker").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            if not any(f" {k}" in node.value for k in ("view ", "join", "leave", "crash")):
                continue
            try:
                recs = parse(node.value)
            except (ValueError, IndexError, KeyError):
                continue
            if any(r["kind"] in ("view", "join", "leave", "crash") for r in recs) and \
                    all(r["kind"] in KINDS for r in recs):
                out.append((f"{path.name}:{node.lineno}", node.value))
    return out


PLANTED_MEMBERSHIP = planted_membership_traces()


def layouts(records: list[dict], tmp_path, name: str):
    for layout, rs in (("interleaved", records), ("grouped", by_process(records))):
        path = tmp_path / f"{name}-{layout}.jsonl"
        write_records(path, rs)
        yield path


@pytest.fixture
def small_window(monkeypatch):
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 8)


def test_the_planted_membership_traces_are_found():
    assert len(PLANTED_MEMBERSHIP) > len(PLANTED) + 10


@pytest.mark.parametrize("where,text", PLANTED_MEMBERSHIP,
                         ids=[w for w, _ in PLANTED_MEMBERSHIP])
def test_every_planted_membership_trace(where, text, small_window, tmp_path):
    for path in layouts(numbers(parse(text)), tmp_path, "t"):
        agree_end(path)


def numbers(records: list[dict]) -> list[dict]:
    """tracedsl's records with real_time and extension fields as numbers, as the
    properties' tests read them (tracedsl keeps them as strings)."""
    for r in records:
        for k, v in r.items():
            if (k == "real_time" or k.startswith("x_")) and isinstance(v, str):
                try:
                    r[k] = int(v)
                except ValueError:
                    try:
                        r[k] = float(v)
                    except ValueError:
                        pass
    return records


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("views", [False, True])
def test_the_generators_faults(fault, views, small_window, tmp_path):
    for seed in SEEDS:
        try:
            recs, _ = faulty_trace(f"t-{fault}-{seed}", fault, seed=seed, n_messages=24,
                                   views=views)
        except ValueError:  # the fault does not fit views
            continue
        for path in layouts(recs, tmp_path, str(seed)):
            agree_end(path)


@pytest.mark.parametrize("path", REAL, ids=[p.name.split(".")[0] for p in REAL])
def test_the_real_systems_fixtures(path, small_window, tmp_path):
    # the file as recorded (interleaved: arrival order), and grouped by process
    agree_end(path)
    grouped = tmp_path / "r-grouped.jsonl"
    write_records(grouped, by_process(read_gz(path)))
    agree_end(grouped)


def test_real_runs_with_views_are_decided_in_the_pass(small_window):
    """Every real run that keeps the picture is decided in the pass with --liveness
    (before, its views sent it to the whole-trace engine). Member liveness too, since
    the retired witnesses are kept on disk: JGroups' late joiner logs no join, so it
    owes what was sent before it came, retired by then (test_stream_behind.py)."""
    fast = []
    for path in REAL:
        run = _Run(END[:3], Options(), False)
        check_stream([path], END[:3], run=run)
        if run.modes == {"fast": 1}:
            assert not run.whole, path.name
            fast.append(path.name)
    assert "jgroups-sequencer-flush-kill-member-s1.jsonl.gz" in fast
    assert "rabbitmq-kill-leader-s1.jsonl.gz" in fast


@given(view_runs(), st.sampled_from([2, 4, 1 << 18]), st.sampled_from([4, 16, 1 << 16]),
       st.booleans())
@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
def test_hypothesis_view_runs(tmp_path_factory, records, trim, rows, grouped):
    if not records:
        return
    with small_windows(trim, rows):
        path = tmp_path_factory.mktemp("v") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        agree_end(path)


@given(near_total_order(), st.sampled_from([2, 4, 1 << 18]), st.booleans(),
       st.sampled_from([4, 16, 1 << 16]))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
def test_hypothesis_runs_without_views(tmp_path_factory, records, trim, grouped, rows):
    if not records:
        return
    with small_windows(trim, rows):
        path = tmp_path_factory.mktemp("p") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        agree_end(path)


@st.composite
def membership_runs(draw):
    """Sends in one order, each process delivering a prefix of it (now and then one
    stops short), with joins, leaves, crashes and rejoins between them, without views;
    each record carries time, real_time or x_slot (or no clock), so member liveness
    judges joiners by either clock, or cannot."""
    procs = [f"p{i}" for i in range(draw(st.integers(2, 4)))]
    local: dict[str, list[dict]] = {p: [] for p in procs}
    clock = draw(st.sampled_from(["time", "real_time", "x_slot", "none"]))
    order: list[str] = []
    done = {p: 0 for p in procs}  # how much of order each has delivered
    gone: set[str] = set()
    for t in range(draw(st.integers(1, 12))):
        stamp = {} if clock == "none" else {clock: t}
        act = draw(st.sampled_from(["send"] * 4 + ["deliver"] * 4 + ["join", "leave",
                                                                      "crash"]))
        p = draw(st.sampled_from(procs))
        if act == "send" and p not in gone:
            m = f"m{len(order)}"
            order.append(m)
            local[p].append({"process": p, "kind": "send", "msg": m, **stamp})
        elif act == "deliver" and p not in gone:
            upto = draw(st.integers(done[p], len(order)))
            local[p] += [{"process": p, "kind": "deliver", "msg": m, **stamp}
                         for m in order[done[p]:upto]]
            done[p] = upto
        elif act == "join":
            gone.discard(p)
            local[p].append({"process": p, "kind": "join", **stamp})
        elif act in ("leave", "crash") and p not in gone:
            if act == "leave":
                gone.add(p)  # a crashed process may go on (and join again)
            local[p].append({"process": p, "kind": act, **stamp})
    for p in procs:  # the rest, most of the time
        if p not in gone and draw(st.integers(0, 3)):
            local[p] += [{"process": p, "kind": "deliver", "msg": m} for m in order[done[p]:]]
    return merge(draw, local)


@given(membership_runs(), st.sampled_from([2, 4, 1 << 18]), st.booleans(),
       st.sampled_from([4, 16, 1 << 16]))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
def test_hypothesis_membership_runs(tmp_path_factory, records, trim, grouped, rows):
    if not records:
        return
    with small_windows(trim, rows):
        path = tmp_path_factory.mktemp("m") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        agree_end(path)


# hand-made runs that keep the picture and violate an end-of-trace property (the view
# properties' planted traces mostly break it): name, trace, the properties violated
KEPT = {
    "a late joiner stalls in its first view": ("""
        p view 1 members=p,q
        q view 1 members=p,q
        p send a
        p deliver a
        q deliver a
        p view 2 members=p,q,r
        q view 2 members=p,q,r
        r join
        r view 2 members=p,q,r
        q send b
        p deliver b
        q deliver b
        p send c
        p deliver c
        q deliver c
        r deliver b
    """, {"agreement", "liveness", "member-liveness"}),
    "a sender that never delivers its own send": ("""
        p view 1 members=p,q
        q view 1 members=p,q
        p send a
        p send b
        q deliver a
        q deliver b
        p deliver a
    """, {"agreement", "validity", "liveness", "member-liveness"}),
    "a leaver is owed nothing of the view it leaves from": ("""
        p view 1 members=p,q,r
        q view 1 members=p,q,r
        r view 1 members=p,q,r
        p send a
        p deliver a
        q deliver a
        r deliver a
        p send b
        p deliver b
        q deliver b
        r leave
        q send c
        q deliver c
    """, {"agreement", "liveness", "member-liveness"}),
    "a crashed deliverer (uniform agreement), the others left behind": ("""
        p view 1 members=p,q
        q view 1 members=p,q
        q send a
        q send b
        p deliver a
        p deliver b
        q deliver a
        p crash
    """, {"agreement", "validity", "liveness", "member-liveness"}),
    "a member dropped from the final view is not correct": ("""
        p view 1 members=p,q,r
        q view 1 members=p,q,r
        r view 1 members=p,q,r
        p send a
        p deliver a
        q deliver a
        r deliver a
        p view 2 members=p,q
        q view 2 members=p,q
        q send b
        q deliver b
        p deliver b
        p send c
        p deliver c
    """, {"agreement", "liveness", "member-liveness"}),
    "joins and leaves without views": ("""
        p send a
        p deliver a
        q deliver a
        r join
        r deliver a
        q send b
        q deliver b
        p deliver b
        r leave
        p send c
        p deliver c
    """, {"agreement", "liveness", "member-liveness"}),
    "a joiner owed a message by its clock": ("""
        p send a time=1
        p deliver a time=1
        q deliver a time=2
        r join time=3
        r deliver a time=3
        p send b time=4
        p deliver b time=5
        q deliver b time=5
        q send c time=6
        q deliver c time=6
        p deliver c time=7
        r deliver b time=8
    """, {"agreement", "liveness", "member-liveness"}),
    "a joiner without clocks cannot be judged": ("""
        p send a
        p deliver a
        q deliver a
        r join
        p send b
        p deliver b
        q deliver b
    """, {"agreement", "liveness"}),
}


@pytest.mark.parametrize("name", sorted(KEPT))
@pytest.mark.parametrize("trim", [2, 4, 1 << 14])
def test_violations_that_keep_the_picture_are_decided_in_the_pass(name, trim, monkeypatch,
                                                                   tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", trim)
    monkeypatch.setattr(driver, "READ_ROWS", 4)
    text, violated = KEPT[name]
    path = tmp_path / "t.jsonl"
    write_records(path, parse(text))
    run = agree_end(path)
    assert run.modes == {"fast": 1} and not run.whole
    got = {k for k, v in run.report.outcomes[0].verdicts.items() if str(v) == "violated"}
    assert got == violated


def stalled(recs: list[dict], process: str, after: int) -> list[dict]:
    """``recs`` with ``process``'s deliveries dropped after its first ``after``."""
    out, n = [], 0
    for r in recs:
        if r["process"] == process and r["kind"] == "deliver":
            n += 1
            if n > after:
                continue
        out.append(r)
    return out


@pytest.mark.parametrize("layout", ["interleaved", "grouped"])
def test_a_long_view_run_with_a_liveness_violation_is_decided_in_the_pass(
        layout, monkeypatch, tmp_path):
    """p3 stops delivering in the last of 40 views: agreement and liveness are violated,
    decided in the pass (no second read), its held records a few windows and the rest of
    p3's last view, not the 30,000 records."""
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    monkeypatch.setattr(driver, "READ_ROWS", 500)
    recs = long_view_run(40, 150)
    recs = stalled(recs, "p3", 39 * 150 + 20)
    if layout == "grouped":
        recs = by_process(recs)
    path = tmp_path / "long.jsonl"
    write_records(path, recs)
    run = _Run(END, Options(), False)
    agree([path], END, run=run)
    assert run.modes == {"fast": 1} and not run.whole
    verdicts = run.report.outcomes[0].verdicts
    assert {k: str(v) for k, v in verdicts.items()} == \
        {"agreement": "violated", "validity": "violated", "liveness": "violated",
         "member-liveness": "violated"}
    if layout == "interleaved":
        assert run.peak_held < 2_000


@pytest.mark.parametrize("stall", [None, 19 * 150 + 20])
def test_a_process_that_lags_in_a_view_trace_reads_the_retired_prefix_from_disk(
        stall, monkeypatch, tmp_path):
    """Grouped by process with one sender (p0, as a fixed sequencer): p1, p2, p3 come
    after p0's positions retired and read them back from disk, view by view (before,
    a lag in a trace with views sent it whole). Clean: decided in the pass, every
    property; p3 stalled in the last view: its witness lies in the retired prefix, and
    is read back from it (retired.py; before, the whole-trace engine decided it)."""
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    monkeypatch.setattr(driver, "READ_ROWS", 500)
    recs = long_view_run(20, 150)
    for r in recs:
        if r["kind"] == "send":
            r["process"] = "p0"
    if stall is not None:
        recs = stalled(recs, "p3", stall)
    path = tmp_path / "grouped.jsonl"
    write_records(path, by_process(recs))
    run = _Run(STREAMED, Options(), False)
    agree([path], run=run)
    agree([path], END, Options())
    assert run.modes == {"fast": 1} and not run.whole
    if stall is None:
        assert run.peak_window < 1_000  # positions in memory, of 3,000
