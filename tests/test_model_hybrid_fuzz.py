"""``tomkit fuzz --protocol hybrid``: the process fuzzer (fuzz/process_machine.py) drives
the hybrid protocol of 001 (Rodrigues, Fonseca, Verissimo) with scripted role switches
(goingToActive, goingToPassive, change of sequencer at times the fuzzer picks), crashes
and view changes on a reordering network: the protocol passes; each literal reading of
Figure 4 (model/hybrid.py's VARIANTS) is found, and one is shrunk to a small trace here
(bench/hybrid_fuzz_variants.py shrinks them all; shrinking costs a few hundred runs)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from tomkit.fuzz.process_machine import RuleFailure, process_machine
from tomkit.fuzz.stateful import fuzz_protocol
from tomkit.model.hybrid import VARIANTS

#: variant -> (n, options, what the checker finds); measured with seed 1: each is
#: found within the first 3 runs
FINDS = {
    "literal-no-null": (3, {"roles": "0", "switches": 1}, "liveness"),
    "literal-view": (3, {"roles": "0", "switches": 1}, "liveness"),
    "literal-duplicates": (4, {"roles": "0", "switches": 3}, "liveness"),
    "literal-ot": (4, {"roles": "0", "switches": 1, "tick_rate": 0}, "liveness"),
}


def test_every_variant_is_covered() -> None:
    assert set(FINDS) == set(VARIANTS)


def test_fuzzer_passes_the_protocol_with_switches_and_crashes() -> None:
    assert fuzz_protocol("hybrid", 3, {"roles": "0", "switches": 3}, 12, 1,
                         max_messages=6, shrink=False) is None


@pytest.mark.parametrize("variant", sorted(FINDS))
def test_fuzzer_finds_each_literal_variant(variant: str) -> None:
    n, options, kind = FINDS[variant]
    failure = fuzz_protocol("hybrid", n, {**options, "variant": variant}, 25, 1,
                            max_messages=10, shrink=False)
    assert failure is not None, variant
    assert failure.found.kind == kind
    assert failure.found.found_at is not None and failure.found.found_at <= 10


def test_literal_view_shrinks_to_the_crash_of_the_only_sequencer() -> None:
    """Shrunk, the literal view branch's failure is: the only active process crashes,
    a passive process sends, and its messages (naming the dead sequencer) are never
    ordered."""
    m = process_machine("hybrid", 3, {"roles": "0", "switches": 1,
                                      "variant": "literal-view"}, max_messages=3)
    seed(1)(m)
    cfg = settings(max_examples=30, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck), print_blob=False,
                   phases=[Phase.generate, Phase.shrink], stateful_step_count=10,
                   report_multiple_bugs=False)
    with pytest.raises(RuleFailure) as e:
        run_state_machine_as_test(m, settings=cfg)
    found = e.value.found
    assert found.kind == "liveness"
    kinds = [r["kind"] for r in found.records]
    assert kinds.count("crash") == 1 and len(found.records) <= 40
    assert [r["process"] for r in found.records if r["kind"] == "crash"] == ["p0"]
