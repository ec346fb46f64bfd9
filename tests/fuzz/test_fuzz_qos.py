"""``tomkit fuzz --protocol qos``: the timed process machine (fuzz/qos_machine.py) finds
and shrinks 003's literal join (reading aid B5) and finds nothing in the protocol."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from tomkit.fuzz import qos_check
from tomkit.fuzz.process_machine import RuleFailure, process_machine
from tomkit.fuzz.qos_machine import timed_machine
from tomkit.fuzz.stateful import fuzz_protocol

# eps large against Delta makes skewed joins frequent (any eps < Delta shows B5)
OPTS = {"slot": 100.0, "max_delay": 50.0, "epsilon": 40.0}


def test_the_process_machine_hands_qos_to_the_timed_machine():
    assert process_machine("qos", 3, OPTS).__name__.startswith("TimedMachine_qos")


def test_literal_join_is_found_and_shrunk():
    # 20 steps per run (the B5 run needs about 8), so that shrinking stays quick
    m = timed_machine("qos", 3, {**OPTS, "variant": "literal-join"}, max_messages=4)
    seed(3)(m)
    cfg = settings(max_examples=200, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck), print_blob=False,
                   phases=[Phase.generate, Phase.shrink], stateful_step_count=20,
                   report_multiple_bugs=False)
    try:
        run_state_machine_as_test(m, settings=cfg)
    except RuleFailure as e:
        found = e.found
    else:
        raise AssertionError("the literal join went unnoticed")
    assert found.kind == "qos-liveness" and "never delivers" in found.explanation
    # shrunk to the B5 core (two joins, the earlier one for a later slot and missed by
    # the other joiner, a send, its deliveries: five records on a quiet machine; the
    # shrinker stops early when it runs slowly, so the bound is loose)
    kinds = [r["kind"] for r in found.records]
    assert kinds.count("send") >= 1 and len(kinds) <= 20
    joins = [r for r in found.records if r["kind"] == "join"]
    assert any(a["x_slot"] > b["x_slot"] and a["process"] != b["process"]
               for k, a in enumerate(joins) for b in joins[k + 1:])
    assert qos_check.liveness(found.records)  # the shrunk trace shows it again
    assert not qos_check.safety(found.records)


def test_qos_survives_the_fuzzer():
    assert fuzz_protocol("qos", 3, OPTS, 40, 1, 6, shrink=False) is None
