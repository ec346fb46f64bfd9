"""The process fuzzer against every literal reading of 001's Figure 4 (Rodrigues,
Fonseca, Verissimo; model/hybrid.py's VARIANTS), full size: for each variant, the run
at which a property first failed, how many runs finding and shrinking took, the
property, and the shrunk trace (its sends, deliveries, crashes, crash notices and
timers, i.e. the scripted switches). The safe reading is fuzzed with the same settings
as the baseline and must pass.

    python bench/hybrid_fuzz_variants.py [--examples 300] [--seed 1] [--variant NAME]

(tests/test_model_hybrid_fuzz.py is the smoke form: every variant found without
shrinking, one shrunk.)
"""

from __future__ import annotations

import argparse
import time

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from tomkit.fuzz.process_machine import RuleFailure, process_machine
from tomkit.model.hybrid import VARIANTS

#: variant -> (n, options, messages per run, steps per run): small groups and runs in
#: which the variant's failure shows (literal-ot needs a goingToActive, two tickets of
#: the old sequencer after it and a message of the new one: more messages and steps)
SETUPS = {
    None: (4, {"roles": "0", "switches": 3}, 10, 30),
    "literal-no-null": (3, {"roles": "0", "switches": 1}, 4, 12),
    "literal-view": (3, {"roles": "0", "switches": 1}, 4, 12),
    "literal-duplicates": (4, {"roles": "0", "switches": 3}, 4, 12),
    "literal-ot": (4, {"roles": "0", "switches": 1, "tick_rate": 0}, 10, 30),
}


def run(variant: str | None, n: int, options: dict, examples: int, seed_: int,
        steps: int, max_messages: int) -> tuple[RuleFailure | None, int, int | None, float]:
    opts = dict(options)
    if variant is not None:
        opts["variant"] = variant
    m = process_machine("hybrid", n, opts, max_messages=max_messages,
                        label=variant or "hybrid")
    seed(seed_)(m)
    cfg = settings(max_examples=examples, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck), print_blob=False,
                   phases=[Phase.generate, Phase.shrink], stateful_step_count=steps,
                   report_multiple_bugs=False)
    t = time.perf_counter()
    try:
        run_state_machine_as_test(m, settings=cfg)
        failure = None
    except RuleFailure as e:
        failure = e
    return failure, m.runs, m.first_failure, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", choices=[*VARIANTS, "safe"], action="append",
                    help="only these (repeat); default the safe reading and every variant")
    a = ap.parse_args()
    print(f"seed {a.seed}, up to {a.examples} examples per variant")
    chosen = [None if v == "safe" else v for v in a.variant] if a.variant else \
        [None, *VARIANTS]
    for variant in chosen:
        n, options, messages, steps = SETUPS[variant]
        failure, runs, first, secs = run(variant, n, options, a.examples, a.seed,
                                         steps, messages)
        name = variant or "hybrid (safe reading)"
        setup = f"n={n} {options}, {messages} messages, {steps} steps"
        if failure is None:
            print(f"{name}: {setup}: passes {runs} runs ({secs:.1f} s)")
            continue
        f = failure.found
        print(f"{name}: {setup}: {f.kind} found at run {first}, "
              f"{runs} runs with shrinking ({secs:.1f} s); shrunk trace "
              f"{len(f.records)} records:")
        print(f"    {f.explanation}")
        for r in f.records:
            if r["kind"] in ("send", "deliver", "crash") or \
                    r.get("x_packet") in ("crash-notice", "timer"):
                extra = f" ticket {r['x_ticket']}" if "x_ticket" in r else ""
                print(f"    {r['process']} {r['kind']} {r.get('msg', '')}{extra}")


if __name__ == "__main__":
    main()
