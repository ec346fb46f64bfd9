"""Causal order on a broken trace after part of it retired (checker/stream/reduced.py):
decided on the held records, the retired dependencies left out of the sends' deps,
with the whole-trace checker's verdicts, witnesses and sentences, in both layouts; a
trace whose held sends no longer carry deps goes whole."""

from __future__ import annotations

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import agree, by_process, merge, small_windows

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.properties import Options, properties, with_scope
from tomkit.checker.stream.driver import _Run
from tomkit.traces.writer import write_records

CAUSAL = [properties()[n] for n in ("causal-order", "integrity", "total-order-weak",
                                    "fifo-order")]
CAUSAL_CORRECT = [with_scope(properties()["causal-order"], "correct")]


def chain(n: int, breach: str, at: int, deps_until: int | None = None) -> list[dict]:
    """Three processes; each message depends on the two before it; one breach at ``at``:
    p1 swaps two deliveries ("swap"), or delivers a message before its dependency
    ("early"), or a send names a dependency never sent ("nowhere"); the sends from
    ``deps_until`` on carry no deps."""
    procs = ["p0", "p1", "p2"]
    recs = []
    for i in range(n):
        deps = [f"m{j}" for j in (i - 2, i - 1) if j >= 0]
        if breach == "nowhere" and i == at:
            deps.append("nowhere")
        if deps_until is not None and i >= deps_until:
            deps = None
        recs.append({"trace": "t", "process": procs[i % 3], "kind": "send", "msg": f"m{i}",
                     "deps": deps})
        recs += [{"trace": "t", "process": p, "kind": "deliver", "msg": f"m{i}"}
                 for p in procs]
    if breach in ("swap", "early"):
        d = [r for r in recs if r["process"] == "p1" and r["kind"] == "deliver"]
        d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    return recs


@pytest.mark.parametrize("breach", ["swap", "nowhere"])
@pytest.mark.parametrize("at", [30, 55])
def test_a_breach_after_retirement_is_decided_on_held_records(breach, at, monkeypatch,
                                                             tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 16)
    recs = chain(60, breach, at)
    for layout, rs in (("interleaved", recs), ("grouped", by_process(recs))):
        path = tmp_path / f"{layout}.jsonl"
        write_records(path, rs)
        run = _Run(CAUSAL, Options(), False)
        agree([path], CAUSAL, run=run)
        agree([path], CAUSAL_CORRECT, Options(scope="correct"))
        if layout == "interleaved":  # a swap makes p1 deliver m_at+1 before m_at, its dep
            assert run.modes == {"slow": 1} and not run.whole, run.modes
            assert str(run.report.outcomes[0].verdicts["causal-order"]) == "violated"


def test_held_sends_without_deps_go_whole(monkeypatch, tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 16)
    path = tmp_path / "t.jsonl"
    write_records(path, chain(60, "swap", 50, deps_until=20))
    run = _Run(CAUSAL, Options(), False)
    agree([path], CAUSAL, run=run)
    assert run.whole  # the held records alone would read "the relation is not logged"


@st.composite
def causal_runs(draw):
    """One sequence delivered by every process, each send with deps on a few earlier
    messages (now and then a later one, or one never sent), deliveries now and then
    swapped, processes' records merged at random."""
    procs = [f"p{i}" for i in range(draw(st.integers(2, 3)))]
    n = draw(st.integers(4, 30))
    local: dict[str, list[dict]] = {p: [] for p in procs}
    order = [f"m{i}" for i in range(n)]
    for i, m in enumerate(order):
        s = draw(st.sampled_from(procs))
        deps = [order[j] for j in draw(st.lists(st.integers(0, max(0, i - 1)), max_size=2))
                if j < i]
        if draw(st.integers(0, 15)) == 0:
            deps.append(draw(st.sampled_from(order + ["nowhere"])))
        local[s].append({"process": s, "kind": "send", "msg": m, "deps": deps})
    for p in procs:
        seq = list(order)
        for _ in range(draw(st.integers(0, 2))):
            i = draw(st.integers(0, n - 2))
            seq[i], seq[i + 1] = seq[i + 1], seq[i]
        local[p] += [{"process": p, "kind": "deliver", "msg": m} for m in seq]
    return merge(draw, local)


@given(causal_runs(), st.sampled_from([2, 4]), st.booleans(), st.sampled_from([4, 8]),
       st.sampled_from([4, 1 << 18]))
@settings(max_examples=examples(50), deadline=None, suppress_health_check=list(HealthCheck))
def test_hypothesis_causal_runs_agree(tmp_path_factory, records, trim, grouped, rows,
                                      spill_rows):
    with small_windows(trim, rows, spill_rows):
        path = tmp_path_factory.mktemp("c") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        agree([path], CAUSAL)
        agree([path], CAUSAL_CORRECT, Options(scope="correct"))
