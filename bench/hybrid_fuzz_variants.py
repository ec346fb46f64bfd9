"""The process fuzzer against every literal reading of 001's Figure 4 (Rodrigues,
Fonseca, Verissimo; model/hybrid/process.py's VARIANTS), full size: for each variant and seed,
the run at which a property first failed, the property, the trace as found, and the
trace after fuzz/reduce.py's step-level reduction (records before -> after, steps,
replays, seconds); against the baseline measured in the same run on the first seed,
Hypothesis's own shrinking of the same search (records, runs, seconds, and the ratio of
records). The
reduced trace of the first seed is printed (sends, deliveries, crashes, crash notices
and timers, i.e. the scripted switches). The safe reading is fuzzed with each
variant's settings and must pass.

    python bench/hybrid_fuzz_variants.py [--examples 1000] [--seeds 1-8] [--variant NAME]
                                         [--no-baseline]

(tests/model/hybrid/test_model_hybrid_fuzz.py is the smoke form: every variant found and reduced
with one seed each, without the baseline.)
"""

from __future__ import annotations

import argparse
import statistics
import time

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from tomkit.fuzz.process_machine import ProcessFailure, RuleFailure, process_machine
from tomkit.fuzz.reduce import reduce
from tomkit.fuzz.seeding import seed_alone
from tomkit.model.hybrid.process import VARIANTS

#: variant -> (n, options, messages per run, steps per run, crashes, judge liveness).
#: literal-ot's total-order breach needs a goingToActive, two tickets of the old
#: sequencer after it and a message of the new one, and no crash: liveness is not judged
#: (its liveness failure, tickets a goingToPassive made stable left in UT, shows first)
SETUPS = {
    "literal-no-null": (3, {"roles": "0", "switches": 1}, 4, 12, None, True),
    "literal-view": (3, {"roles": "0", "switches": 1}, 4, 12, None, True),
    "literal-duplicates": (3, {"roles": "0", "switches": 1}, 10, 60, None, True),
    "literal-ot": (3, {"roles": "0", "switches": 1, "tick_rate": 0, "heartbeat": 0}, 6,
                   20, 0, False),
}


def machine(variant: str | None, setup: tuple) -> type:
    n, options, messages, _, crashes, liveness = setup
    opts = dict(options) if variant is None else {**options, "variant": variant}
    return process_machine("hybrid", n, opts, max_messages=messages, max_crashes=crashes,
                           liveness=liveness, label=variant or "hybrid")


def search(m: type, examples: int, seed_: int, steps: int, shrink: bool
           ) -> tuple[ProcessFailure | None, float]:
    seed(seed_)(m)
    cfg = settings(max_examples=examples, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck), print_blob=False,
                   phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate],
                   stateful_step_count=steps, report_multiple_bugs=False)
    t = time.perf_counter()
    try:
        with seed_alone():  # the seed's runs, whatever this process imported
            run_state_machine_as_test(m, settings=cfg)
        found = None
    except RuleFailure as e:
        found = e.found
    return found, time.perf_counter() - t


def show(f: ProcessFailure) -> None:
    print(f"      {f.explanation}")
    print(f"      steps: {'; '.join(' '.join(map(str, s)) for s in f.schedule)}")
    for r in f.records:
        if r["kind"] in ("send", "deliver", "crash") or \
                r.get("x_packet") in ("crash-notice", "timer"):
            extra = f" ticket {r['x_ticket']}" if "x_ticket" in r else ""
            print(f"      {r['process']} {r['kind']} {r.get('msg', '')}{extra}")


def seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=1000)
    ap.add_argument("--seeds", type=seeds, default=seeds("1-8"), help="e.g. 1-8 or 3")
    ap.add_argument("--variant", choices=list(SETUPS), action="append",
                    help="only these (repeat); default every variant with a setup here")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip Hypothesis's shrinking (the baseline, on the first seed)")
    a = ap.parse_args()
    print(f"seeds {a.seeds[0]}-{a.seeds[-1]}, up to {a.examples} examples per search")
    unset = [v for v in VARIANTS if v not in SETUPS]
    if unset and not a.variant:  # a variant added to the model since: said, not a KeyError
        print(f"no setup here for {', '.join(unset)} (fuzzed by their own tests)")
    for variant in a.variant or list(SETUPS):
        setup = SETUPS[variant]
        n, options, messages, steps, crashes, liveness = setup
        print(f"{variant}: n={n} {options}, {messages} messages, {steps} steps, "
              f"crashes {'minority' if crashes is None else crashes}, liveness "
              f"{'judged' if liveness else 'not judged'}")
        safe, secs = search(machine(None, setup), a.examples, a.seeds[0], steps, False)
        print(f"  safe reading, seed {a.seeds[0]}: "
              f"{'passes' if safe is None else 'FAILS: ' + safe.describe()} ({secs:.1f} s)")
        found_at, after, ratios = [], [], []
        for sd in a.seeds:
            m = machine(variant, setup)
            f, secs = search(m, a.examples, sd, steps, False)
            if f is None:
                print(f"  seed {sd}: not found in {m.runs} runs ({secs:.1f} s)")
                continue
            t = time.perf_counter()
            red = reduce(m, f)
            rsecs = time.perf_counter() - t
            g = red.failure
            found_at.append(m.first_failure)
            after.append(len(g.records))
            cut = f", cut from {g.drained} drained" if g.drained is not None else ""
            line = (f"  seed {sd}: {f.kind} found at run {m.first_failure} ({secs:.1f} s); "
                    f"reduced {len(f.records)} -> {len(g.records)} records{cut}, "
                    f"{len(f.schedule)} -> {len(g.schedule)} steps, {red.replays} replays "
                    f"({rsecs:.1f} s)")
            if not a.no_baseline and sd == a.seeds[0]:
                mb = machine(variant, setup)
                h, hsecs = search(mb, a.examples, sd, steps, True)
                if h is not None:
                    ratios.append(len(h.records) / len(g.records))
                    line += (f"; Hypothesis shrinking: {len(h.records)} records, "
                             f"{mb.runs} runs ({hsecs:.1f} s), {ratios[-1]:.1f}x the "
                             "reduced")
            print(line, flush=True)
            if sd == a.seeds[0]:
                show(g)
        if found_at:
            print(f"  {variant}: found in {len(found_at)}/{len(a.seeds)} seeds, at run "
                  f"median {statistics.median(found_at):g} (max {max(found_at)}); reduced "
                  f"to {min(after)}-{max(after)} records (median "
                  f"{statistics.median(after):g})" +
                  (f"; Hypothesis's shrinking leaves {ratios[0]:.1f}x as many"
                   if ratios else ""))


if __name__ == "__main__":
    main()
