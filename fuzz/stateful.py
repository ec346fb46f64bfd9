"""Running a fuzzing machine under Hypothesis: its settings, its seed, its failure.

``tomkit fuzz`` runs :mod:`~tomkit.fuzz.dag_machine` (a rule on DAG views revealed in
adversarial orders) or :mod:`~tomkit.fuzz.process_machine` (the process models on a
hostile network, the trace checkers as invariants). Hypothesis searches ``examples``
runs from ``seed`` (deterministic) and shrinks the first failure unless told not to.
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

__all__ = ["default_delta", "fuzz"]


def default_delta(name: str, n: int) -> int | None:
    """ceil(n/2), the least delta ToTo allows; none for rules that take no delta."""
    return None if name in ("all-ack", "majority") else (n + 1) // 2


def fuzz(rule_name: str, n: int, delta: int | None, examples: int, seed_: int,
         machine: str = "dag", max_messages: int = 14, shrink: bool = True):
    """Run the machine; None when nothing failed, else the failure (with ``.found``),
    shrunk by Hypothesis unless ``shrink`` is False."""
    from tomkit.fuzz.counterexample import resolve_rule
    from tomkit.model.rules import Params

    rule_fn = resolve_rule(rule_name)
    params = Params(delta)
    if machine == "dag":
        from tomkit.fuzz.dag_machine import RuleFailure, rule_machine

        m = rule_machine(rule_fn, params, n, rule_name, max_messages=max_messages)
    else:
        from tomkit.fuzz.process_machine import RuleFailure, process_machine

        m = process_machine(rule_fn, params, n, rule_name, max_messages=max_messages)
    seed(seed_)(m)
    cfg = settings(max_examples=examples, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck), print_blob=False,
                   phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate],
                   stateful_step_count=60,
                   report_multiple_bugs=False)
    try:
        run_state_machine_as_test(m, settings=cfg)
    except RuleFailure as e:
        return e
    return None
