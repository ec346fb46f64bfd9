"""The rule vocabulary's arithmetic (model/toto/vocab.py): a product by a Python int works in
every interpretation, and every other operation is one line naming it and what to write
instead, never Python's "unsupported operand type" (issue 30)."""

from __future__ import annotations

import random
import sys

import pytest

from tomkit.cli import main
from tomkit.fuzz.prove.delivery.encoding import make_dag, make_view
from tomkit.fuzz.prove.delivery.prove import prove_rule
from tomkit.fuzz.prove.delivery.solve import symbolic_outcome
from tomkit.model.toto.compiled import compiled
from tomkit.model.toto.dag import DagView, Message
from tomkit.model.toto.rules import Params, drain
from tomkit.model.toto.vocab import ConcreteRuleView, OpaqueRuleView, VocabularyError


def majority_of_votes(v, params):
    """A user's rule: deliver M_G once some candidate has more than half the votes."""
    big = v.exists(lambda m: v.nvt(m) * 2 > v.n)
    small = v.forall(lambda m: 3 * v.ntail(m) - v.nvt(m) * 1 >= -v.u)
    return v.first((v.and_(big, small), v.deliver(v.candidates, "majority")))


def _dags(seed: int, count: int) -> list[DagView]:
    """Random causal DAG views of 3 or 4 processors."""
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        procs = [f"p{i}" for i in range(rnd.randint(3, 4))]
        g = DagView(procs)
        sent: list[str] = []
        last: dict[str, str] = {}
        for j in range(rnd.randint(1, 8)):
            p = rnd.choice(procs)
            # a processor's messages form a chain; each may also follow others' messages
            deps = {last[p]} if p in last else set()
            deps |= set(rnd.sample(sent, min(len(sent), rnd.randint(0, 2))))
            mid = f"{p}.{j}"
            g.insert(Message(mid, p, tuple(sorted(deps))))
            sent.append(mid)
            last[p] = mid
        out.append(g)
    return out


def test_a_product_by_an_int_is_the_same_in_the_concrete_opaque_and_compiled_views():
    decided = 0
    for g in _dags(1, 60):
        want = majority_of_votes(ConcreteRuleView(g), Params())
        assert majority_of_votes(OpaqueRuleView(g), Params()) == want
        cands, yes, tail, mk, rk, seen = g.rule_inputs()
        fn = compiled(majority_of_votes, Params(), g.n, len(cands))
        assert fn is not None  # traced, not left to the slow concrete path
        assert fn(cands, yes, tail, mk, rk, seen) == want
        decided += want is not None
    assert decided > 0  # the rule fires on some of the DAGs


def test_a_product_by_an_int_is_proved_with_z3():
    out = prove_rule("majority_of_votes", majority_of_votes, 3, None, k=2)
    assert out.method == "z3" and "outside the vocabulary" not in out.note
    # a counterexample is replayed on the concrete interpretation before it is reported
    assert out.status in ("proved", "counterexample")


def _uses(op: str):
    """A rule whose predicate applies ``op`` to a vocabulary value."""
    apply = {
        "/": lambda x: x / 2 > 1, "//": lambda x: x // 2 > 1, "%": lambda x: x % 2 == 0,
        "**": lambda x: x ** 2 > 1, "*": lambda x: x * x > 1, "&": lambda x: (x > 1) & (x > 2),
        "|": lambda x: (x > 1) | (x > 2), "~": lambda x: ~(x > 1),
        "<<": lambda x: x << 1 > 1, "abs()": lambda x: abs(x) > 1,
        "int()": lambda x: int(x) > 1, "an index": lambda x: [0, 1, 2][x] > 1,
    }[op]

    def rule(v, params):
        return v.first((v.exists(lambda m: apply(v.nvt(m))), v.deliver(v.candidates, "x")))
    return rule


OPS = ["/", "//", "%", "**", "*", "&", "|", "~", "<<", "abs()", "int()", "an index"]


def _one_line(e: Exception, op: str) -> None:
    text = str(e)
    assert "\n" not in text and "unsupported operand" not in text
    assert text.startswith("the rule vocabulary has no ")
    assert (op if op.endswith(")") else repr(op)) in text
    assert ": " in text.split(" on its values")[1]  # what to write instead


@pytest.mark.parametrize("op", OPS)
def test_an_unsupported_operation_is_named_in_every_interpretation(op):
    rule = _uses(op)
    g = _dags(2, 1)[0]
    with pytest.raises(VocabularyError) as ei:  # the opaque (checking) interpretation
        rule(OpaqueRuleView(g), Params())
    _one_line(ei.value, op)
    with pytest.raises(VocabularyError) as ei:  # Z3's
        symbolic_outcome(lambda v: rule(v, Params()), make_view(make_dag(3, 1), "T"), 3)
    _one_line(ei.value, op)
    # the compiler cannot trace it: the simulator evaluates it concretely, on plain ints
    cands, *_ = g.rule_inputs()
    assert compiled(rule, Params(), g.n, len(cands)) is None
    list(drain(g, rule, Params()))


def test_division_by_a_vocabulary_value_is_named_too():
    def rule(v, params):
        return v.first((v.exists(lambda m: 4 / v.nvt(m) > 1), v.deliver(v.candidates, "x")))
    with pytest.raises(VocabularyError, match="no '/' on its values"):
        rule(OpaqueRuleView(_dags(3, 1)[0]), Params())


def test_prove_says_in_one_line_what_to_write_instead(tmp_path, monkeypatch, capsys):
    (tmp_path / "user_rules_div.py").write_text(
        "def halved(v, params):\n"
        "    big = v.exists(lambda m: v.nvt(m) / 2 > 1)\n"
        "    return v.first((big, v.deliver(v.candidates, 'half')))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("user_rules_div", None)
    rc = main(["prove", "user_rules_div:halved", "--n", "3", "--method", "z3"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [
        "tomkit prove: user_rules_div:halved is outside the rule vocabulary: the rule "
        "vocabulary has no '/' on its values: multiply the other side by a Python int "
        "instead: v.nvt(m) * 2 > v.n, not v.nvt(m) > v.n / 2"]
