"""Smallest counterexamples (fuzz/prove/delivery/minimal.py) and their space-time pictures
(checker/spacetime.py, fuzz/counterexample.to_svg)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tomkit.checker import spacetime
from tomkit.checker.spacetime import Arrow, Cut, Event
from tomkit.fuzz.counterexample import from_witness, shrink, to_svg, validate
from tomkit.fuzz.prove.delivery import enumerate as en
from tomkit.fuzz.prove.delivery.prove import prove_rule
from tomkit.fuzz.prove.delivery.solve import prove
from tomkit.model.toto.mutants import MUTANTS
from tomkit.model.toto.rules import Params

SVG = "{http://www.w3.org/2000/svg}"


def _shape_size(shape: en.Shape) -> tuple[int, int]:
    msgs = en.messages_of(shape)
    sender = {m.id: m.sender for m in msgs}
    return len(msgs), sum(1 for m in msgs for d in m.deps if sender[d] != m.sender)


@pytest.mark.parametrize("mutant,n,k,delta,prop", [
    ("s-toto-low-delta", 4, 1, 1, "agreement"),
    ("g-toto-no-ntail", 4, 1, 1, "external-stability"),
])
def test_minimum_equals_the_smallest_enumerated_violation(mutant, n, k, delta, prop):
    """Exhaustive enumeration of every DAG (smallest first: messages, then edges between
    processors) finds the same minimum that Z3 proves."""
    def fn(v):
        return MUTANTS[mutant](v, Params(delta))

    r = prove(fn, n, k, prop)
    assert r.status == "counterexample"
    sizes = r.stats["sizes"]
    assert sizes.proved
    assert sizes.messages <= sizes.messages_first
    smallest = next(_shape_size(s) for s in sorted(en.dag_shapes(n, k), key=_shape_size)
                    if en.search(fn, n, k, prop, shapes=[s]).found)
    assert (sizes.messages, sizes.edges) == smallest
    cx = shrink(from_witness(r.witness, mutant, delta))
    assert cx.size() == smallest


def test_s_toto_no_internal_at_six_processors_is_small():
    """The issue's example: Z3's first model had 8 to 16 messages; one first message per
    processor (a crash standing for the sixth) and four edges suffice."""
    o = prove_rule("s-toto-no-internal", MUTANTS["s-toto-no-internal"], 6, 3,
                   props=("agreement",))
    assert o.status == "counterexample" and o.sizes is not None and o.sizes.proved
    cx = o.counterexample
    validate(cx)
    assert cx.size() == (o.sizes.messages, o.sizes.edges)
    assert cx.size()[0] <= 6 and cx.size()[1] <= 4
    assert all(mid.endswith(".1") for mid, _, _ in cx.messages)
    first = prove_rule("s-toto-no-internal", MUTANTS["s-toto-no-internal"], 6, 3,
                       props=("agreement",), minimal=False)
    assert first.sizes is None
    assert first.counterexample.size() >= cx.size()


@pytest.fixture(scope="module")
def small_cx():
    o = prove_rule("s-toto-no-internal", MUTANTS["s-toto-no-internal"], 6, 3,
                   props=("agreement",))
    return o.counterexample


def test_svg_draws_lanes_arrows_and_two_cuts(small_cx):
    cx = small_cx
    text = to_svg(cx)
    root = ET.fromstring(text.split("\n", 1)[1])  # after the XML declaration
    labels = [t.text for t in root.iter(SVG + "text")]
    for q in cx.processors:
        assert q in labels
    cuts = [p for p in root.iter(SVG + "polygon") if p.get("class") == "cut"]
    assert [c.get("data-cut") for c in cuts] == ["V1", "V2"]
    arrows = {(a.get("data-from"), a.get("data-to")) for a in root.iter(SVG + "line")
              if a.get("class") == "arrow"}
    sender = {i: s for i, s, _ in cx.messages}
    want = {(d, i) for i, s, deps in cx.messages for d in deps if sender[d] != s}
    assert arrows == want and len(arrows) == cx.size()[1]
    events = {e.get("data-id") for e in root.iter() if e.get("class") == "event"}
    assert {i for i, _, _ in cx.messages} <= events
    for v in cx.views:
        for q in v.crashed:
            assert f"Crash({q})" in events
    assert to_svg(cx) == text  # deterministic


def _cut_right_edges(poly: ET.Element) -> list[float]:
    pts = [tuple(map(float, p.split(","))) for p in poly.get("points").split()]
    return [x for x, _ in pts[1:-1:2]]


def test_a_cut_ends_after_its_last_event_on_each_lane():
    lanes = ["a", "b", "c"]
    events = [Event("a1", 0, 0), Event("a2", 0, 1), Event("b1", 1, 2)]
    text = spacetime.svg(lanes, events, [Arrow("a1", "b1")],
                         [Cut("V", (1, None, None), "#1f77b4")])
    root = ET.fromstring(text.split("\n", 1)[1])
    poly = next(p for p in root.iter(SVG + "polygon"))
    a, b, c = _cut_right_edges(poly)
    xs = {e.get("data-id"): float(e.get("cx")) for e in root.iter(SVG + "circle")}
    assert xs["a2"] < a  # a2 inside the cut
    assert b < xs["a1"] and c == b  # nothing of b or c inside
    assert b < xs["b1"]


def test_spacetime_refuses_unknown_events_and_lanes():
    with pytest.raises(ValueError, match="no event 'x'"):
        spacetime.svg(["a"], [Event("a1", 0, 0)], [Arrow("a1", "x")])
    with pytest.raises(ValueError, match="lane 2 of 1"):
        spacetime.svg(["a"], [Event("a1", 2, 0)])
    with pytest.raises(ValueError, match="given twice"):
        spacetime.svg(["a"], [Event("a1", 0, 0), Event("a1", 0, 1)])
