"""fuzz/reduce.py, the step-level reducer of the process fuzzer, on protocols other than
the hybrid one (tests/model/hybrid/test_model_hybrid_fuzz.py has the hybrid's literal readings): a
fuzzed failure's schedule replays to the same trace; the reduced schedule still fails
the same property by the checker's own verdict, is 1-minimal, and a safety failure is
cut to the shortest prefix that violates it."""

from __future__ import annotations

import pytest

from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.fuzz.process_machine import ProcessFailure, RuleFailure, process_machine
from tomkit.fuzz.reduce import reduce, replay, shortest_prefix
from tomkit.fuzz.stateful import fuzz_protocol, run_machine


def search(machine: type, examples: int, seed_: int) -> ProcessFailure:
    """Hypothesis's search only (the reducer does the shrinking)."""
    failure = run_machine(machine, examples, seed_, shrink=False)
    assert isinstance(failure, RuleFailure), failure
    return failure.found


@pytest.mark.parametrize("protocol,options", [
    ("tomp", {"variant": "raise-all"}),  # FIFO links
    ("toto", {"delta": 1, "rule": "s-toto-low-delta"}),  # lossy links, crashes
])
def test_reduced_failure_is_a_true_minimal_breach(protocol: str, options: dict) -> None:
    if "rule" in options:
        from tomkit.model.toto.mutants import resolve_rule

        options = {**options, "rule": resolve_rule(options["rule"])}
    m = process_machine(protocol, 3 if protocol == "tomp" else 4, options, max_messages=4
                        if protocol == "tomp" else 12)
    found = search(m, 300, 1)
    again, _ = replay(m, found.schedule)
    assert again is not None and again.records == found.records  # deterministic
    red = reduce(m, found)
    f = red.failure
    assert f.kind == found.kind and red.complete
    assert len(f.records) < len(found.records) and len(f.schedule) < len(found.schedule)
    assert f.reduced_from == len(found.records)
    # the checker, asked afresh, rejects the reduced (cut) trace, and no shorter prefix
    prop = properties()[f.kind]
    assert prop.check(Trace.from_records(f.records), Options()).verdict == Verdict.VIOLATED
    assert prop.check(Trace.from_records(f.records[:-1]), Options()).verdict != \
        Verdict.VIOLATED
    # 1-minimal: without any one of its steps, the run no longer fails this way, or
    # only with a longer violating prefix
    for i in range(len(f.schedule)):
        other, _ = replay(m, f.schedule[:i] + f.schedule[i + 1:])
        assert other is None or other.kind != f.kind or \
            shortest_prefix(m, other)[0] > len(f.records)


def test_tomkit_fuzz_reduces_after_shrinking() -> None:
    """fuzz_protocol (``tomkit fuzz --protocol``) reduces what Hypothesis shrank."""
    failure = fuzz_protocol("tomp", 3, {"variant": "raise-all"}, 60, 1, max_messages=4,
                            shrink=False, reduce=True)
    assert failure is not None
    f = failure.found
    assert f.reduced_from is not None and len(f.records) < f.reduced_from
    assert "reduced from" in f.describe()


def test_membership_runs_replay_and_reduce() -> None:
    """The membership machine's steps (crash, join, partition, agree) replay too: ToTo
    over 000's membership service without the flush acknowledgements (a variant
    tests/model/toto/test_toto_membership_variants.py finds) reduces to a few steps."""
    m = process_machine("toto-dynamic", 4, {"variant": "no-flush-acks"}, max_messages=8)
    found = search(m, 200, 1)
    again, _ = replay(m, found.schedule)
    assert again is not None and again.records == found.records
    red = reduce(m, found)
    assert red.failure.kind == found.kind and red.complete
    assert len(red.failure.records) < len(found.records) and len(red.failure.schedule) <= 6
