"""``tomkit fuzz --protocol hybrid``: the process fuzzer (fuzz/process_machine.py) drives
the hybrid protocol of 001 (Rodrigues, Fonseca, Verissimo) with scripted role switches
(goingToActive, goingToPassive, change of sequencer at times the fuzzer picks), crashes
and view changes on a reordering network: the protocol passes; each literal reading of
Figure 4 (model/hybrid.py's VARIANTS) is found, and the two that show in the fewest steps
are shrunk to small traces here (bench/hybrid_fuzz_variants.py shrinks them all:
shrinking costs from one to several hundred runs)."""

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
    assert fuzz_protocol("hybrid", 3, {"roles": "0", "switches": 3}, 8, 1,
                         max_messages=6, shrink=False) is None


@pytest.mark.parametrize("variant", sorted(FINDS))
def test_fuzzer_finds_each_literal_variant(variant: str) -> None:
    n, options, kind = FINDS[variant]
    failure = fuzz_protocol("hybrid", n, {**options, "variant": variant}, 25, 1,
                            max_messages=10, shrink=False)
    assert failure is not None, variant
    assert failure.found.kind == kind
    assert failure.found.found_at is not None and failure.found.found_at <= 10


@pytest.mark.parametrize("variant", ["literal-view", "literal-no-null"])
def test_variant_shrinks_to_the_crash_of_the_only_sequencer(variant: str) -> None:
    """Shrunk (runs of at most 6 steps, which keeps shrinking to about a hundred runs),
    both failures are: the only active process p0 crashes, p2 is promoted, a passive
    process sends, and its messages are never delivered: under ``literal-view`` they
    still name the dead sequencer; under ``literal-no-null`` p2 tickets them but has
    nothing to carry the tickets."""
    m = process_machine("hybrid", 3, {"roles": "0", "switches": 1, "variant": variant},
                        max_messages=3)
    seed(1)(m)
    cfg = settings(max_examples=60, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck), print_blob=False,
                   phases=[Phase.generate, Phase.shrink], stateful_step_count=6,
                   report_multiple_bugs=False)
    with pytest.raises(RuleFailure) as e:
        run_state_machine_as_test(m, settings=cfg)
    found = e.value.found
    assert found.kind == "liveness"
    assert len(found.records) <= 30
    assert [r["process"] for r in found.records if r["kind"] == "crash"] == ["p0"]
    sends = {r["process"] for r in found.records if r["kind"] == "send"}
    assert sends and "p0" not in sends
