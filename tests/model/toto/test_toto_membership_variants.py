"""The literal readings of 000 section 5 kept as broken variants of ``toto-dynamic``
(model/toto/membership.py, docs/toto-membership.md), each shown failing, and the process fuzzer
driving crashes, joins and partitions through the membership service."""

from __future__ import annotations

from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.fuzz.process_machine import process_machine
from tomkit.fuzz.stateful import run_machine
from tomkit.model.net.links import Delay
from tomkit.model.protocols import protocol
from tomkit.model.sim import SimConfig, simulate
from tomkit.model.toto.membership import VARIANTS as MEMBERSHIP_VARIANTS


def sim(variant, seed=0, **kw):
    return simulate(SimConfig(protocol="toto-dynamic", n=5, options={"variant": variant},
                              messages=200, rate=200.0, delay=Delay("exponential", 0.003),
                              detection_delay=0.02, seed=seed, **kw))


def verdict(records, name):
    return properties()[name].check(Trace.from_records(records), Options(scope="correct"))


def test_the_variants_are_declared_and_named_as_mutants():
    assert set(protocol("toto-dynamic").variants) == set(MEMBERSHIP_VARIANTS) == {
        "no-flush-acks", "all-components"}


def test_without_flush_messages_the_view_change_never_completes():
    """000 section 5.1 read literally: the agreed set holds the regular messages only. After
    p2 crashes the survivors wait for each other's votes on the last messages, which
    nobody will send in the closing view: no survivor installs view 2, and their messages
    are never delivered. The decided reading delivers everything in the same run."""
    crash = (("p2", 0.1),)
    bad, good = sim("no-flush-acks", crashes=crash), sim(None, crashes=crash)
    views = {r["view"] for r in bad.records if r["kind"] == "view"}
    assert views == {"1"} and bad.stats["undelivered"] > 100
    res = verdict(bad.records, "liveness")
    assert res.verdict == Verdict.VIOLATED
    assert good.stats["undelivered"] == 0 and verdict(good.records, "liveness").verdict == \
        Verdict.HOLDS
    assert {r["view"] for r in good.records if r["kind"] == "view"} == {"1", "2"}


def test_when_every_component_continues_the_agreed_order_breaks():
    """000 section 1 lets "a set of machines ... continue to form the total order on their
    own"; if both sides of a partition do, each delivers the old configuration's messages
    with the other side Defunc, in its own order: two machines connected in view 1
    disagree (total-order-strong, 000 Figure 2's agreed order); 4 of seeds 0 to 5 break
    it. The primary-component reading holds on the same runs."""
    part = ((0.1, (("p0", "p1", "p2"), ("p3", "p4"))),)
    for seed in range(2):
        bad, good = sim("all-components", seed, partitions=part), sim(None, seed, partitions=part)
        res = verdict(bad.records, "total-order-strong")
        assert res.verdict == Verdict.VIOLATED, seed
        assert "in view 1" in res.explanation
        assert {w.process for w in res.witness} & {"p0", "p1", "p2"}
        assert {w.process for w in res.witness} & {"p3", "p4"}
        assert verdict(good.records, "total-order-strong").verdict == Verdict.HOLDS


def test_the_process_fuzzer_passes_crashes_joins_and_partitions():
    """Judged in the correct scope (a machine cut off from the primary component may have
    delivered what the primary never does: docs/toto-membership.md, decision 9). 20
    examples of seed 1 make 34 runs, with 74 partitions, 64 joins, 46 crashes and 67
    configuration changes (33 with machines leaving), counted once by hand."""
    m = process_machine("toto-dynamic", 5, max_messages=10, spares=1)
    assert run_machine(m, 20, 1, shrink=False) is None
    assert m.runs >= 20


def test_without_partitions_the_fuzzer_holds_the_uniform_properties():
    """Crashes and joins only: the crashed machines' deliveries are judged too (uniform
    scope), since the Agree stage waits for every packet of a crashed machine."""
    m = process_machine("toto-dynamic", 4, max_messages=10, spares=1, partitions=False)
    assert run_machine(m, 12, 2, shrink=False) is None


def test_the_process_fuzzer_finds_the_literal_flush_stalling():
    m = process_machine("toto-dynamic", 4, {"variant": "no-flush-acks"}, max_messages=8)
    failure = run_machine(m, 200, 1, shrink=False)
    assert failure is not None and failure.found.kind == "liveness"
