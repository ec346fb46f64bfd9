"""Tests of ``tomkit prove`` (fuzz/prove, fuzz/prove_cli.py, fuzz/mutants.py): the
built-in rules are proved for small n; every mutant that must fail is refuted with a
counterexample the concrete model reproduces; user rules via module:function; a rule
outside the vocabulary falls back to enumeration."""

from __future__ import annotations

import argparse
import sys
import textwrap

import pytest
import z3

from tomkit.cli import prove as prove_cli
from tomkit.fuzz.counterexample import ReplayMismatch, validate
from tomkit.fuzz.prove.delivery import QUERIES
from tomkit.fuzz.prove.delivery import prove as prove_rules
from tomkit.fuzz.prove.delivery.encoding import make_dag, make_view
from tomkit.fuzz.prove.delivery.solve import prove, symbolic_outcome
from tomkit.model.toto.mutants import MUTANTS
from tomkit.model.toto.rules import RULES, Params


def run_cli(*argv: str) -> int:
    p = argparse.ArgumentParser()
    prove_cli.add_parser(p.add_subparsers())
    args = p.parse_args(["prove", *argv])
    return args.func(args)


@pytest.mark.parametrize("name", sorted(RULES))
def test_builtin_rules_are_proved_for_small_n(name):
    rule = RULES[name]
    deltas = prove_rules.allowed_deltas(rule, 4)
    assert deltas == ([None] if name == "all-ack" else
                      [2, 3] if name in ("toto", "s-toto") else [1, 2, 3])
    for n, props in ((3, QUERIES), (4, ("agreement",))):
        for d in prove_rules.allowed_deltas(rule, n):
            o = prove_rules.prove_rule(name, rule, n, d, props=props)
            assert o.status == "proved", o.line(name)
            assert o.method == "z3" and "vacuous" not in o.note


@pytest.mark.parametrize("name,n,delta", [
    ("s-toto-no-internal", 6, 3),
    ("g-toto-no-ntail", 5, 1),
    ("majority", 5, None),
    ("s-toto-low-delta", 4, 1),
])
def test_mutants_are_refuted_with_a_replayed_counterexample(name, n, delta):
    rule = MUTANTS[name]
    o = prove_rules.prove_rule(name, rule, n, delta, props=("agreement",))
    assert o.status == "counterexample" and o.method == "z3"
    cx = o.counterexample
    d1, d2 = validate(cx, rule)  # raises unless the concrete rule disagrees
    assert set(d1.messages) != set(d2.messages)


def test_002s_restatement_of_toto_is_proved_at_n4_and_refuted_at_n6():
    """ToTo as Johnson and Maugis (002 section 3) restate it, the mutant
    ``toto-002-restated``: proved at n = 4, refuted at n = 6, delta = 3, the smallest
    refuting size docs/toto-figures.md reports (two candidates per view, no Crash events,
    the solver's first model shrunk: seconds, where the minimal search takes a minute).
    000's ToTo delivers alike at the counterexample's two views."""
    from dataclasses import replace

    rule = MUTANTS["toto-002-restated"]
    assert prove_rules.prove_rule("toto-002-restated", rule, 4, 2,
                                  props=("agreement",)).status == "proved"
    o = prove_rules.prove_rule("toto-002-restated", rule, 6, 3, k=2, props=("agreement",),
                               crashes=False, minimal=False)
    assert o.status == "counterexample" and o.method == "z3"
    cx = o.counterexample
    d1, d2 = validate(cx, rule)
    assert set(d1.messages) != set(d2.messages) and "default" in (d1.clause, d2.clause)
    with pytest.raises(ReplayMismatch, match="does not violate"):
        validate(replace(cx, rule="toto"), RULES["toto"])


def test_every_z3_witness_is_checked_against_the_concrete_rule():
    # a wrong claim about what the rule delivers must be caught by the replay
    r = prove(lambda v: MUTANTS["majority"](v, Params()), 5, 3, "agreement")
    from tomkit.fuzz.counterexample import from_witness
    cx = from_witness(r.witness, "majority", None)
    validate(cx)
    from dataclasses import replace
    with pytest.raises(ReplayMismatch):
        validate(replace(cx, delivered=(cx.delivered[1], cx.delivered[0])))


def test_toto_below_half_is_safe_for_one_activation():
    """A finding, not a planted result: ToTo's NTail(s) >= n - delta leaves at most delta
    processors unseen, so an unseen candidate cannot win; S-ToTo, without it, fails."""
    for n in (4,):
        for d in prove_rules.allowed_deltas(MUTANTS["toto-low-delta"], n):
            assert prove_rules.prove_rule("toto-low-delta", MUTANTS["toto-low-delta"], n, d,
                                        props=("agreement",)).status == "proved"


def test_each_named_property_can_fail():
    """internal- and external-stability are separate queries, each with a witness."""
    for prop in QUERIES:
        # majority is externally stable: an unseen message's voters are all unseen
        name, d = ("g-toto-no-ntail", 1) if prop == "external-stability" else ("majority", None)
        r = prove(lambda v: MUTANTS[name](v, Params(d)), 5, 2, prop)  # noqa: B023
        assert r.status == "counterexample", prop
        w = r.witness
        assert w.property == prop
        if prop != "agreement":
            assert set(w.views[0].messages) <= set(w.views[1].messages)


def test_the_z3_view_refuses_python_branching():
    g = make_dag(3, 1)
    v = make_view(g, "V")

    def branching(v, params):
        if v.nvt(v.candidates) == 3:  # a raw Z3 == would have a truth value
            return None

    def eq_branch(v, params):
        return v.first((v.exists(lambda m: v.nvt(m) == 2 if v.u == 0 else True),
                        v.deliver(v.candidates, "x")))

    def comparing(v, params):
        return v.first((v.exists(lambda a: v.exists(lambda b: a == b)),
                        v.deliver(v.candidates, "x")))

    for rule in (branching, eq_branch, comparing):
        with pytest.raises(TypeError):
            symbolic_outcome(lambda w: rule(w, Params()), v, 3)  # noqa: B023
    out = symbolic_outcome(lambda w: RULES["toto"](w, Params(2)), v, 3)
    assert z3.is_bool(out.fired) and len(out.members) == 3


USER = textwrap.dedent('''
    def unanimous(v, params):
        """Safe: deliver M_G once some candidate has every processor's vote."""
        return v.first((v.exists(lambda m: v.nvt(m) == v.n),
                        v.deliver(v.candidates, "unanimous")))

    def first_seen(v, params):
        """Broken: deliver the candidates once half of the processors are seen."""
        return v.first((v.ntail_g + v.ntail_g >= v.n, v.deliver(v.candidates, "half")))

    def branchy(v, params):
        """Outside the vocabulary (branches in Python), and broken."""
        if v.u == 0:
            return v.first((True, v.deliver(v.candidates, "all")))
        return v.first((v.exists(lambda m: v.nvt(m) > 1),
                        v.deliver(v.subset(lambda m: v.nvt(m) > 1), "some")))
''')


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_rules_for_test.py").write_text(USER)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "my_rules_for_test"
    sys.modules.pop("my_rules_for_test", None)


def test_user_rule_by_module_function(user_module, tmp_path, capsys):
    assert run_cli(f"{user_module}:unanimous", "--n", "3-4") == 0
    out = capsys.readouterr().out
    assert out.count("proved  method=z3") == 2
    assert run_cli(f"{user_module}:first_seen", "--n", "3", "--out", str(tmp_path / "cx")) == 1
    out = capsys.readouterr().out
    assert "counterexample  method=z3" in out
    assert sorted(p.suffix for p in (tmp_path / "cx").iterdir()) == [
        ".dot", ".jsonl", ".svg", ".txt"]


def test_rule_outside_the_vocabulary_falls_back_to_enumeration(user_module, capsys):
    assert run_cli(f"{user_module}:branchy", "--n", "3") == 1
    out = capsys.readouterr().out
    assert "method=enumeration" in out and "outside the vocabulary" in out
    # beyond the enumeration limits the verdict is unknown, not proved
    assert run_cli(f"{user_module}:branchy", "--n", "6", "--property", "agreement") == 3
    assert "too large to enumerate" in capsys.readouterr().out


def test_bad_input_exits_2(capsys):
    assert run_cli("no-such-rule", "--n", "3") == 2
    assert run_cli("toto", "--n", "4", "--delta", "1") == 2
    assert run_cli("nomodule_xyz:f", "--n", "3") == 2
    err = capsys.readouterr().err
    assert "no-such-rule" in err and "delta = 1" in err and "nomodule_xyz" in err
