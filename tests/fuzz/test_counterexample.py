"""Tests of fuzz/counterexample.py: the trace of a counterexample fails ``tomkit check``,
the picture renders, the explanation names the votes, shrinking keeps the violation."""

from __future__ import annotations

import pytest

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.fuzz.counterexample import (
    explain,
    from_witness,
    render,
    shrink,
    to_dot,
    to_trace,
    validate,
)
from tomkit.fuzz.prove.delivery.solve import prove
from tomkit.model.toto.mutants import MUTANTS
from tomkit.model.toto.rules import Params


@pytest.fixture(scope="module")
def cx():
    r = prove(lambda v: MUTANTS["s-toto-no-internal"](v, Params(3)), 6, 3, "agreement")
    assert r.status == "counterexample" and r.witness.order_violation
    raw = from_witness(r.witness, "s-toto-no-internal", 3)
    small = shrink(raw)
    assert len(small.messages) <= len(raw.messages)
    return small


def test_trace_fails_tomkit_check_with_total_order(cx, tmp_path):
    path = tmp_path / "cx.jsonl"
    assert to_trace(cx, path) > 0
    report = check_paths([path], select(None, Options()))
    assert report.exit_code() == 1
    assert report.counts["total-order-strong"].get(2, 0) == 1  # Verdict.VIOLATED
    assert report.counts["integrity"].get(2, 0) == 0


def test_dot_has_lanes_candidates_and_views(cx, tmp_path):
    dot = to_dot(cx)
    for q in cx.processors:
        assert f'subgraph "cluster_{q}"' in dot
    assert "candidate" in dot and "delivered at V1" in dot and "delivered at V2" in dot
    svg = render(cx, tmp_path / "cx.svg")
    assert open(svg).read().lstrip().startswith(("<?xml", "<svg"))
    assert (tmp_path / "cx.dot").read_text() == dot
    with pytest.raises(ValueError):
        render(cx, tmp_path / "cx.pdf")


def test_explanation_gives_votes_win_future_and_deliveries(cx):
    text = explain(cx)
    assert "nvt = " in text and "VV = " in text and "votes(a,b) / Win(a,b)" in text
    assert "sources S = " in text
    for d in cx.delivered:
        assert str(list(d)) in text
    assert "different orders" in text


def test_shrunk_counterexample_replays(cx):
    d1, d2 = validate(cx)
    assert d1.messages == cx.delivered[0] and d2.messages == cx.delivered[1]
