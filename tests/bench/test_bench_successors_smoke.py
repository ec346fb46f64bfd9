"""Smoke test of bench/successors_section7.py (002 section 7 with delta below n/2)."""

from __future__ import annotations

import importlib.util
import math
import sys

import pytest
from locations import ROOT

BENCH = ROOT / "bench" / "successors_section7.py"


@pytest.fixture(scope="module")
def mod():
    spec = importlib.util.spec_from_file_location("successors_section7", BENCH)
    m = importlib.util.module_from_spec(spec)
    sys.modules["successors_section7"] = m
    spec.loader.exec_module(m)
    return m


@pytest.fixture(scope="module")
def wide(mod):
    return mod.topology_rows("wide9", messages=200, seed=1, loads=(400,),
                             sources=("poisson",), deltas=(2, 5), log=lambda s: None)


def test_rows_cover_every_rule_and_delta(wide) -> None:
    assert [(r["rule"], r["delta"]) for r in wide] == [
        ("all-ack", 5), ("toto", 5), ("toto-002", 5), ("s-toto", 5), ("g-toto", 2),
        ("gl-toto", 2), ("g-toto", 5), ("gl-toto", 5)]
    for r in wide:
        assert r["early"] + r["default"] + r["prefix"] == pytest.approx(1.0)
        assert 0.0 <= r["earlier"] + r["later"] <= 1.0
        assert r["omega"] > 1.5  # the 3-LAN topology makes a wide DAG
        assert r["prefix"] == 0.0 or r["rule"] == "gl-toto"
    by = {(r["rule"], r["delta"]): r for r in wide}
    assert by[("toto", 5)]["earlier"] == by[("toto", 5)]["later"] == 0.0
    assert by[("all-ack", 5)]["default"] == 1.0 and by[("all-ack", 5)]["ntail"] == 9.0
    # 002 section 4: at delta >= n/2 G-ToTo is S-ToTo (the bench also checks it run by run)
    assert by[("g-toto", 5)]["lat_ms"] == by[("s-toto", 5)]["lat_ms"]
    # the regime 002 wrote G-ToTo for: a small delta delivers before NTail(G) = n more often
    assert by[("g-toto", 2)]["before_all"] > by[("toto", 5)]["before_all"]
    assert by[("gl-toto", 2)]["prefix"] > 0.0
    assert 0.0 <= by[("gl-toto", 2)]["earlier_than_g"] <= 1.0


def test_claims_summarise_the_rows(mod, wide) -> None:
    c = mod.claims(wide)
    assert c["gl_prefix_max"] == max(r["prefix"] for r in wide if r["rule"] == "gl-toto")
    assert 0.0 <= c["toto_at_n_wide"] <= 1.0
    [(case, delta, lat, tlat, *_)] = c["gl_best"]
    assert case == ("wide9", "poisson", 400) and delta in (2, 5) and lat > 0 and tlat > 0
    assert not math.isnan(c["s_before_toto_at_n_max"])
    assert not math.isnan(c["s_before_t002_at_n_max"])
    s = next(r for r in wide if r["rule"] == "s-toto")
    assert c["s_earlier_wide"] == (s["earlier"], s["earlier"])
    assert math.isnan(c["s_earlier_lan"][1])  # no LAN rows here


def test_toto_as_002_restates_is_s_toto_with_one_more_conjunct(mod, wide) -> None:
    """002's restatement of ToTo delivers early no more often than S-ToTo on this run (its
    early clause is S-ToTo's with a conjunct more; the default rules are the same), and
    it differs from 000's ToTo on the wide DAG."""
    by = {(r["rule"], r["delta"]): r for r in wide}
    t002, s = by[("toto-002", 5)], by[("s-toto", 5)]
    assert t002["before_all"] <= s["before_all"]
    assert t002["early_n"] <= s["early_n"]
    assert t002["later"] > 0.0  # later than 000's ToTo somewhere
    assert all(r["agree"] for r in wide)


def test_toto_as_002_restates_breaks_agreement_at_n6(mod) -> None:
    """The agreement counterexample ``tomkit prove`` found for 002's restatement of ToTo as
    printed (n = 6, delta = 3): V1 delivers its two sources early, V2 (NTail(p5.1) =
    n - delta, not more) falls to the default rule and delivers p2.1 first. 000's ToTo
    and S-ToTo deliver the two sources at both views."""
    from tomkit.model.toto.dag import DagView, Message
    from tomkit.model.toto.rules import Params, evaluate, s_toto, toto

    dag = {"p0.1": ("p3.1",), "p1.1": ("p4.1",), "p1.2": ("p1.1", "p5.1"), "p2.1": (),
           "p3.1": ("p1.1", "p5.1"), "p4.1": (), "p5.1": ()}

    def view(ids):
        v = DagView([f"p{i}" for i in range(6)])
        for mid in ids:
            v.insert(Message(mid, mid.split(".")[0], dag[mid]))
        return v

    v1 = ["p4.1", "p5.1", "p1.1", "p1.2", "p3.1", "p0.1"]
    v2 = ["p4.1", "p5.1", "p2.1", "p1.1", "p3.1", "p0.1"]
    p = Params(delta=3)
    d1 = evaluate(view(v1), mod.toto_as_002_restates, p)
    d2 = evaluate(view(v2), mod.toto_as_002_restates, p)
    assert (d1.messages, d1.clause) == (("p4.1", "p5.1"), "early")
    assert (d2.messages, d2.clause) == (("p2.1", "p4.1", "p5.1"), "default")
    for rule in (toto, s_toto):
        assert evaluate(view(v1), rule, p).messages == ("p4.1", "p5.1")
        assert evaluate(view(v2), rule, p).messages == ("p4.1", "p5.1")


def test_toto_as_002_with_ge_breaks_agreement_at_n6(mod) -> None:
    """With NTail(s') >= n - delta (000's relation) the restatement still fails (tomkit
    prove's counterexample): at V1 (every processor seen, NTail(p2.1) = 2 < 3) the
    default rule delivers p4.1 too; V2, which also has p5.2, delivers the sources early."""
    from tomkit.model.toto.dag import DagView, Message
    from tomkit.model.toto.rules import Params, evaluate, s_toto, toto

    dag = {"p0.1": ("p2.1", "p3.1"), "p1.1": ("p5.1",), "p2.1": (), "p3.1": ("p1.1",),
           "p4.1": (), "p5.1": (), "p5.2": ("p2.1", "p5.1")}

    def view(ids):
        v = DagView([f"p{i}" for i in range(6)])
        for mid in ids:
            v.insert(Message(mid, mid.split(".")[0], dag[mid]))
        return v

    v1 = ["p2.1", "p4.1", "p5.1", "p1.1", "p3.1", "p0.1"]
    v2 = [*v1, "p5.2"]
    p = Params(delta=3)
    d1 = evaluate(view(v1), mod.toto_as_002_restates_ge, p)
    d2 = evaluate(view(v2), mod.toto_as_002_restates_ge, p)
    assert (d1.messages, d1.clause) == (("p2.1", "p4.1", "p5.1"), "default")
    assert (d2.messages, d2.clause) == (("p2.1", "p5.1"), "early")
    for rule in (toto, s_toto):
        assert evaluate(view(v1), rule, p).messages == ("p2.1", "p5.1")
        assert evaluate(view(v2), rule, p).messages == ("p2.1", "p5.1")


def test_quick_main(mod, capsys) -> None:
    assert mod.main(["--quick", "--messages", "120", "--topology", "lan8", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "seed 4" in out and "claim by claim" in out and "5.12" in out
