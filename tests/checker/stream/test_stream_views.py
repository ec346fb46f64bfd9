"""The single pass over traces with views (checker/stream/views.py) against the
whole-trace checker: the same verdicts, witnesses and sentences on every planted view
trace of tests/checker/, the generators' faults with views, the real systems' fixtures,
and Hypothesis-made view-synchronous runs, in both file layouts, with windows small
enough that views open and close while positions retire; and a long clean run with
views stays in the pass in bounded memory."""

from __future__ import annotations

import ast
import gzip
import json

import pytest
from budget import SEEDS, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from locations import DATA, TESTS
from stream_oracle import CORRECT, STREAMED, agree, by_process, merge, outcomes, small_windows
from tracedsl import parse

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options
from tomkit.checker.stream.driver import _Run, check_stream
from tomkit.traces.generate import FAULTS, faulty_trace
from tomkit.traces.writer import write_records


def both_layouts(records: list[dict], tmp_path, name: str):
    for layout, rs in (("interleaved", records), ("grouped", by_process(records))):
        path = tmp_path / f"{name}-{layout}.jsonl"
        write_records(path, rs)
        yield path


@pytest.fixture
def small_window(monkeypatch):
    """A window of 4 positions read 8 records at a time: views open and close, and
    positions retire, within one short trace."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 8)


def planted_view_traces() -> list[tuple[str, str]]:
    """Every hand-written trace with a view record in tests/checker/'s modules (the view
    properties' planted faults and clean cases), by module and line."""
    out = []
    for path in sorted((TESTS / "checker").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    " view " in node.value:
                try:
                    recs = parse(node.value)
                except (ValueError, IndexError, KeyError):
                    continue
                if any(r["kind"] == "view" for r in recs):
                    out.append((f"{path.name}:{node.lineno}", node.value))
    return out


PLANTED = planted_view_traces()


def test_the_planted_view_traces_are_found():
    assert len(PLANTED) >= 10


@pytest.mark.parametrize("where,text", PLANTED, ids=[w for w, _ in PLANTED])
def test_every_planted_view_trace(where, text, small_window, tmp_path):
    for path in both_layouts(parse(text), tmp_path, "t"):
        agree([path])
        agree([path], CORRECT, Options(scope="correct"))


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_the_generators_faults_with_views(fault, small_window, tmp_path):
    for seed in SEEDS:
        try:
            recs, _ = faulty_trace(f"t-{fault}-{seed}", fault, seed=seed, n_messages=24,
                                   views=True)
        except ValueError:  # the fault does not fit views
            continue
        for path in both_layouts(recs, tmp_path, str(seed)):
            agree([path])
            agree([path], CORRECT, Options(scope="correct"))


REAL = sorted((DATA / "real").glob("*.jsonl.gz"))


def read_gz(path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [r for r in map(json.loads, f) if "kind" in r]


@pytest.mark.parametrize("path", REAL, ids=[p.name.split(".")[0] for p in REAL])
def test_the_real_systems_fixtures(path, small_window, tmp_path):
    # the file as recorded (interleaved: arrival order), and grouped by process
    grouped = tmp_path / "r-grouped.jsonl"
    write_records(grouped, by_process(read_gz(path)))
    for p in (path, grouped):
        agree([p])
        agree([p], CORRECT, Options(scope="correct"))


def test_some_real_runs_stay_in_the_pass(small_window):
    """The real runs whose views keep the picture are decided in the pass, as positions
    retire (the others violate a property, and are judged on their records)."""
    fast = []
    for path in REAL:
        run = _Run(STREAMED, Options(), False)
        check_stream([path], STREAMED, run=run)
        if run.modes == {"fast": 1}:
            fast.append(path.name)
    assert "jgroups-sequencer-flush-s1.jsonl.gz" in fast
    assert "jgroups-sequencer-flush-late-join-s1.jsonl.gz" in fast


@st.composite
def view_runs(draw):
    """A view-synchronous run: now and then messages before any view, then views v1, v2,
    ... of changing members, each member sending in its view and delivering a prefix of
    the view's sequence before moving on, with
    some of: a swap, a gap, a delivery in the next view, a member that moves on having
    delivered less, a crash, a join, a leave, two member sets for one view, a view
    installed twice or out of order, a smaller numeric id."""
    procs = [f"p{i}" for i in range(draw(st.integers(1, 4)))]
    local: dict[str, list[dict]] = {p: [] for p in procs}
    numeric = draw(st.booleans())
    nviews = draw(st.integers(1, 4))
    members = list(procs)
    n = 0
    if draw(st.integers(0, 3)) == 0:  # sends and deliveries before any view
        seq = [f"m{n + i}" for i in range(draw(st.integers(1, 3)))]
        n += len(seq)
        for m in seq:
            s = draw(st.sampled_from(procs))
            local[s].append({"process": s, "kind": "send", "msg": m})
        for p in procs:
            local[p] += [{"process": p, "kind": "deliver", "msg": m}
                         for m in seq[:draw(st.integers(len(seq) - 1, len(seq)))]]
    for v in range(nviews):
        if v and draw(st.integers(0, 2)) == 0 and len(members) > 1:
            gone = draw(st.sampled_from(members))
            members = [p for p in members if p != gone]
            kind = draw(st.sampled_from(["crash", "leave", "none"]))
            if kind != "none":
                local[gone].append({"process": gone, "kind": kind})
        elif v and draw(st.integers(0, 3)) == 0 and len(members) < len(procs):
            back = draw(st.sampled_from([p for p in procs if p not in members]))
            local[back].append({"process": back, "kind": "join"})
            members = sorted(members + [back])
        name = str(10 * (v + 1)) if numeric else f"v{v + 1}"
        for p in members:
            mem = list(members)
            if draw(st.integers(0, 15)) == 0:
                mem = mem[:-1]  # one member set too few
            local[p].append({"process": p, "kind": "view", "view": name, "members": mem})
            if draw(st.integers(0, 20)) == 0:  # installed twice
                local[p].append({"process": p, "kind": "view", "view": name,
                                 "members": mem})
        seq = []
        for _ in range(draw(st.integers(0, 5))):
            s = draw(st.sampled_from(members))
            m = f"m{n}"
            n += 1
            local[s].append({"process": s, "kind": "send", "msg": m})
            seq.append(m)
        for p in members:
            mine = list(seq)
            f = draw(st.sampled_from(["none"] * 6 + ["swap", "gap", "short", "late"]))
            if f == "swap" and len(mine) >= 2:
                i = draw(st.integers(0, len(mine) - 2))
                mine[i], mine[i + 1] = mine[i + 1], mine[i]
            elif f == "gap" and len(mine) >= 2:
                del mine[draw(st.integers(0, len(mine) - 2))]
            elif f in ("short", "late") and mine:
                mine = mine[:-1]
            local[p] += [{"process": p, "kind": "deliver", "msg": m} for m in mine]
    if numeric and nviews >= 2 and draw(st.integers(0, 8)) == 0:
        p = draw(st.sampled_from(procs))  # a smaller id after greater ones
        local[p].append({"process": p, "kind": "view", "view": "5", "members": [p]})
    return merge(draw, {p: local[p] for p in procs})


@given(view_runs(), st.sampled_from([2, 4, 1 << 18]), st.sampled_from([4, 16, 1 << 16]),
       st.booleans())
@settings(max_examples=examples(50), deadline=None, suppress_health_check=list(HealthCheck))
def test_hypothesis_view_runs_agree(tmp_path_factory, records, trim, rows, grouped):
    if not records:
        return
    with small_windows(trim, rows):
        path = tmp_path_factory.mktemp("v") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        agree([path])
        agree([path], CORRECT, Options(scope="correct"))


def long_view_run(n_views: int, per_view: int, procs: int = 4) -> list[dict]:
    """A clean run: every process installs every view, each message is sent by one and
    delivered by all in its view, records interleaved round by round."""
    names = [f"p{i}" for i in range(procs)]
    out = []
    k = 0
    for v in range(n_views):
        out += [{"trace": "long", "process": p, "kind": "view", "view": str(v + 1),
                 "members": names} for p in names]
        for _ in range(per_view):
            s = names[k % procs]
            out.append({"trace": "long", "process": s, "kind": "send", "msg": f"m{k}"})
            out += [{"trace": "long", "process": p, "kind": "deliver", "msg": f"m{k}"}
                    for p in names]
            k += 1
    return out


def test_a_long_clean_view_run_stays_in_the_pass_in_bounded_memory(monkeypatch, tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    monkeypatch.setattr(driver, "READ_ROWS", 500)
    recs = long_view_run(40, 150)  # 6,000 messages, 30,160 records, 40 views
    path = tmp_path / "long.jsonl"
    write_records(path, recs)
    run = _Run(STREAMED, Options(), False)
    agree([path], run=run)
    assert run.modes == {"fast": 1}
    assert run.peak_held < 2_000  # a few windows and the view records, not 30,160


def test_a_late_breach_in_a_long_view_run_is_decided_in_the_pass(monkeypatch, tmp_path):
    """A breach after positions retired: what each process delivered in the retired views
    is carried over (viewheld.py), and the held records decide it (the same report); so
    they do for every streamed property, the end-of-trace ones carried over and latency
    combined with the retired prefix's tally (reduced.py)."""
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    monkeypatch.setattr(driver, "READ_ROWS", 500)
    recs = long_view_run(10, 100)
    last = [i for i, r in enumerate(recs) if r["kind"] == "deliver" and r["process"] == "p1"]
    a, b = last[-3], last[-1]
    recs[a]["msg"], recs[b]["msg"] = recs[b]["msg"], recs[a]["msg"]
    path = tmp_path / "late.jsonl"
    write_records(path, recs)
    safe = [p for p in STREAMED if not p.final() and p.held]
    run = _Run(safe, Options(), False)
    agree([path], safe, run=run)
    assert run.modes == {"slow": 1, "views carried": 1} and not run.whole
    run = _Run(STREAMED, Options(), False)
    agree([path], run=run)
    assert not run.whole


@pytest.mark.parametrize("breach", [False, True])
def test_watch_follows_a_long_view_run(breach, monkeypatch, tmp_path):
    """tomkit watch keeps a clean view run in the pass as it grows (its held records a few
    windows); a breach after positions retired is judged on its held records as it comes
    (the retired views carried over, viewheld.py), and at the end too (every member
    delivered the retired prefix, so member liveness stands; latency is combined with the
    retired prefix's tally, reduced.py), with ``tomkit check``'s report."""
    import io

    import tomkit.checker.stream.watch as watch

    monkeypatch.setattr(watch, "WATCH_TRIM_AT", 16)
    recs = long_view_run(12, 60)
    if breach:
        last = [i for i, r in enumerate(recs)
                if r["kind"] == "deliver" and r["process"] == "p2"]
        a, b = last[-5], last[-4]
        recs[a]["msg"], recs[b]["msg"] = recs[b]["msg"], recs[a]["msg"]
    lines = [json.dumps(r) + "\n" for r in recs]
    path = tmp_path / "w.jsonl"
    path.write_text("")
    out = io.StringIO()
    w = watch.Watch([str(path)], STREAMED, Options(), fmt="json", out=out)
    held = []
    for k in range(0, len(lines), 400):
        with open(path, "a") as f:
            f.write("".join(lines[k:k + 400]))
        w.cycle()
        held.append(sum(s.held() for s in w.run.states.values()))
    assert max(held) < 1_500  # of 3,708 records
    report = w.finish()
    whole = check_paths([path], STREAMED, Options())
    assert outcomes(report) == outcomes(whole)
    assert w.run.modes == ({"slow": 1, "views carried": 1} if breach else {"fast": 1})
    assert not w.run.whole
    printed = {json.loads(x)["property"] for x in out.getvalue().splitlines()}
    assert printed == {n for o in whole.outcomes for n, r in o.results.items()
                       if str(r.verdict) == "violated"}
    assert bool(printed) == breach
