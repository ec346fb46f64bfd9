"""Running a fuzzing machine under Hypothesis: its settings, its seed, its failure.

``tomkit fuzz`` runs :mod:`~tomkit.fuzz.dag_machine` (a rule on DAG views revealed in
adversarial orders) or :mod:`~tomkit.fuzz.process_machine` (the process models on a
hostile network, the trace checkers as invariants). Hypothesis searches ``examples``
runs from ``seed`` (deterministic) and shrinks the first failure unless told not to;
a process machine's failure is then reduced step by step (``fuzz/reduce.py``).
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from .seeding import seed_alone

__all__ = ["default_delta", "fuzz", "fuzz_protocol", "run_machine"]


def default_delta(name: str, n: int) -> int | None:
    """ceil(n/2), the least delta ToTo allows; none for rules that take no delta."""
    return None if name in ("all-ack", "majority") else (n + 1) // 2


def run_machine(machine: type, examples: int, seed_: int, shrink: bool = True,
                steps: int = 60) -> AssertionError | None:
    """Run ``machine`` for up to ``examples`` runs of up to ``steps`` steps from
    ``seed_``; the failure it raised (shrunk by Hypothesis unless ``shrink`` is False),
    or None. The runs depend on the seed alone, not on what the process ran or imported
    before (``fuzz/seeding.py``)."""
    from tomkit.fuzz.dag_machine import RuleFailure as DagFailure
    from tomkit.fuzz.process_machine import RuleFailure as ProcessFailure

    seed(seed_)(machine)
    cfg = settings(max_examples=examples, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck), print_blob=False,
                   phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate],
                   stateful_step_count=steps,
                   report_multiple_bugs=False)
    try:
        with seed_alone():
            run_state_machine_as_test(machine, settings=cfg)
    except (DagFailure, ProcessFailure) as e:
        return e
    return None


def fuzz(rule_name: str, n: int, delta: int | None, examples: int, seed_: int,
         machine: str = "dag", max_messages: int = 14, shrink: bool = True):
    """The rule form: a ToTo-family delivery rule (built-in, mutant or module:function)
    on the DAG machine, or in the process machine of the ToTo family. None when nothing
    failed, else the failure (with ``.found``)."""
    from tomkit.model.toto.mutants import resolve_rule
    from tomkit.model.toto.rules import RULES, Params

    rule_fn = resolve_rule(rule_name)
    if machine == "dag":
        from tomkit.fuzz.dag_machine import rule_machine

        m = rule_machine(rule_fn, Params(delta), n, rule_name, max_messages=max_messages)
        return run_machine(m, examples, seed_, shrink)
    if rule_name in RULES:
        return fuzz_protocol(rule_name, n, {"delta": delta}, examples, seed_, max_messages,
                             shrink)
    return fuzz_protocol("toto", n, {"delta": delta, "rule": rule_fn}, examples, seed_,
                         max_messages, shrink, label=rule_name)


def fuzz_protocol(protocol: str, n: int, options: dict | None, examples: int, seed_: int,
                  max_messages: int = 12, shrink: bool = True, *,
                  max_crashes: int | None = None, label: str | None = None,
                  reduce: bool | None = None, spares: int = 0, comebacks: int = 0):
    """Any protocol in the process machine (``fuzz/process_machine.py``). None when
    nothing failed, else the failure; its ``found.found_at`` is the number of runs
    Hypothesis had started when a property first failed. ``reduce`` (default: as
    ``shrink``) then reduces the failing run's schedule (``fuzz/reduce.py``; the
    failure's ``reduced_from`` is its record count before): the shrunk failure and the
    failure as first found are both reduced, and the shorter kept (Hypothesis shrinks
    draws, not records: its result can be a longer run, e.g. one that livelocks).
    ``spares`` and ``comebacks``: joins and recoveries (``process_machine``)."""
    from tomkit.fuzz.process_machine import process_machine

    m = process_machine(protocol, n, options, max_messages=max_messages,
                        max_crashes=max_crashes, label=label, spares=spares,
                        comebacks=comebacks)
    failure = run_machine(m, examples, seed_, shrink)
    if failure is not None:
        failure.found.found_at = m.first_failure
        if (shrink if reduce is None else reduce) and failure.found.schedule:
            failure.found = _reduced(m, failure.found)
    return failure


def _reduced(m: type, found):
    """The shortest of the reductions of ``found`` and of ``m``'s first failure of the
    same property (fuzz/reduce.py); ``found`` itself if its run does not replay."""
    from tomkit.fuzz.reduce import reduce as reduce_run

    best = found
    first = getattr(m, "first_found", None)
    for f in [found] + ([first] if first is not None and first is not found
                        and first.kind == found.kind else []):
        try:
            red = reduce_run(m, f).failure
        except ValueError:  # the run does not replay: keep it as Hypothesis left it
            continue
        if best.reduced_from is None or len(red.records) < len(best.records):
            red.reduced_from = len(found.records)
            red.found_at = found.found_at
            best = red
    return best
