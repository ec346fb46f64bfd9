"""Reproduce the simulation results of 001 (Rodrigues, Fonseca, Verissimo): Figure 1
(token-site against symmetric), Figure 3 (the static hybrid on two LANs, nine scenarios)
and Figure 5 (the dynamic hybrid through the nine scenarios in sequence), with the
paper's figures beside the measured ones.

    python bench/hybrid_figures.py [--seed 1] [--quick] [--figure 1|3|5] [--out DIR]

The figures themselves are images lost in the OCR; what the text gives, and what is
printed beside the measurements ("paper" columns):

* Figure 1 (section 4.2): 30 processes at 10 msg/s; "the latency of the token-site
  protocol follows the 2D line and the latency of the symmetric protocol follows the
  D + t line"; token-site better iff 2D < D + t, i.e. D < t = 100 ms.
* Figure 3 (section 4.4): D1 = 20 ms, D2 = 500 ms, H = 100 msg/s, L lost (1 msg/s,
  ours), the scenario table lost (ours: model/net/load.py); token-site with A the sequencer;
  "heavily loaded processes are active and lightly loaded processes are passive in all
  scenarios"; token-site best when the load sits near A, degraded when it moves away;
  symmetric best in scenario 9; the hybrid "almost flat", matching the best case. The
  lines printed for each scenario are the paper's rules applied per sender and weighted
  by its rate: token-site 2D (to the sequencer, then to the farthest process), symmetric
  D + t (the farthest delay plus the largest inter-message time).
* Figure 5 (section 6.2): the nine scenarios in sequence, quasi-periodic and Poisson; the
  hybrid below both baselines, "almost constant" with quasi-periodic sources, "a
  temporary increase [...] upon each change", Poisson "more irregular and [...] slightly
  higher". Each scenario lasts ``--dwell`` seconds (20, ours); "settled" is the second
  half of each scenario, "peak" the worst 1 s window of the first half (the transient).

The simulations and every choice of ours: tomkit/runs/hybrid.py, model/net/topology.py (the
delay model and the variance reading), model/net/load.py (rates, scenarios),
model/hybrid/latency.py (the metric). Plots: fig1.png and fig5.png in ``--out``
(default out/hybrid-figures).

``--quick``: Figure 1 at D = 50 and 200 ms for 4 s, Figure 3's scenarios 1, 4, 6 and 9
for 4 s, Figure 5 through scenarios 1, 4, 9, 6 for 10 s each, quasi-periodic only.

``--sensitivity``: the paper's claims (Figure 3 flat, Figure 5 below both baselines)
over the values it does not give (mean-shift k, the variance's unit, the low rate, the
scenario length; tomkit/runs/sensitivity.py). ``--demo``: ``tomkit demo``'s hybrid step.

``--write-docs`` rewrites docs/hybrid-figures.md's generated sections of what ran (each
section names its configuration; full configurations only, not ``--quick``), so the page
quotes what the model does today; tests/bench/test_bench_hybrid_docs_smoke.py reruns
parts of them against the committed page.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from tomkit.model.net.load import FIG3_SCENARIOS, FIG5_DWELL
from tomkit.model.net.topology import fig3_topology
from tomkit.runs.hybrid import (
    FIG1_DELAYS,
    PROTOCOLS,
    demo_markdown,
    fig1,
    fig1_crossover,
    fig3,
    fig5,
    plot_fig1,
    plot_fig5,
    run_demo,
)
from tomkit.runs.markdown import write_section
from tomkit.runs.sensitivity import fig3_claims, fig3_markdown, fig5_claims, fig5_markdown

DOC = Path(__file__).resolve().parent.parent / "docs" / "hybrid-figures.md"
#: the configurations the page quotes (the tests rerun parts of them)
FIG1 = {"n": 30, "duration": 12.0, "warmup": 2.0}
FIG3 = {"duration": 12.0, "warmup": 1.0}
FIG3_CV2 = {"duration": 6.0, "warmup": 1.0}
SENS3 = {"duration": 6.0, "warmup": 1.0}

#: Figure 5's mean-shift k (001 footnote 6 lost it; ours, docs/hybrid-figures.md)
FIG5_K = 10


def ms(x: float) -> str:
    return "   n/a" if math.isnan(x) else f"{x * 1e3:6.0f}"


def print_fig1(rows, out: Path | None, n: int) -> None:
    print(f"\nFigure 1: token-site and symmetric alone ({n} processes, 10 msg/s each, "
          "quasi-periodic), latency in ms")
    print(f"{'D':>6} | {'token':>6} {'2D':>6} {'ratio':>6} | {'symm':>6} {'D+t':>6} "
          f"{'ratio':>6} | better")
    for r in rows:
        print(f"{r.d * 1e3:6.0f} | {ms(r.token)} {ms(r.two_d)} {r.token / r.two_d:6.3f} | "
              f"{ms(r.symmetric)} {ms(r.d_plus_t)} {r.symmetric / r.d_plus_t:6.3f} | "
              f"{'token-site' if r.token < r.symmetric else 'symmetric'}")
    x = fig1_crossover(rows)
    print(f"crossover: measured D = {x * 1e3:.0f} ms; paper D = t = "
          f"{rows[0].t * 1e3:.0f} ms")
    if out is not None:
        print(f"plot: {plot_fig1(rows, out / 'fig1.png', n)}")


def print_fig3(rows, title: str) -> None:
    print(f"\nFigure 3{title}: five processes, two LANs (D1 = 20 ms, D2 = 500 ms), "
          "latency in ms; roles: X* active, X>Y passive with sequencer Y")
    print(f"{'sc':>2} {'loads':>5} | {'token':>6} {'2D':>6} | {'symm':>6} {'D+t':>6} | "
          f"{'hybrid':>6} {'/best':>6} | hybrid roles (Figure 2 = observed)")
    for r in rows:
        ratio = r.latency["hybrid"] / r.best_baseline
        same = "=" if r.expected_roles == r.observed_roles else "!="
        print(f"{r.scenario:2d} {r.loads:>5} | {ms(r.latency['token-site'])} "
              f"{ms(r.paper['token-site'])} | {ms(r.latency['symmetric'])} "
              f"{ms(r.paper['symmetric'])} | {ms(r.latency['hybrid'])} {ratio:6.3f} | "
              f"{r.expected_roles} {same} {r.observed_roles}")
    hy = [r.latency["hybrid"] for r in rows]
    print(f"hybrid: {min(hy) * 1e3:.0f} .. {max(hy) * 1e3:.0f} ms (paper: 'almost flat'); "
          f"worst hybrid / best baseline {max(r.latency['hybrid'] / r.best_baseline for r in rows):.3f} "  # noqa: E501
          "(paper: matches the best case)")


def print_fig5(res, k: int) -> None:
    print(f"\nFigure 5, {res.source} sources, mean-shift k = {k}: the scenarios in sequence, "
          f"{res.dwell:g} s "
          "each; latency in ms (settled: second half of the scenario; peak: worst "
          f"{res.window:g} s window of the first half, the hybrid's transient)")
    print(f"{'sc':>2} {'loads':>5} | {'token':>6} {'symm':>6} {'hybrid':>6} | "
          f"{'peak':>6} | hybrid roles (settled)")
    from tomkit.model.net.load import FIG3_SCENARIOS

    for k, sc in enumerate(res.scenarios):
        lo, mid = k * res.dwell, (k + 0.5) * res.dwell
        peak = max((m for t, m, _ in res.series["hybrid"]
                    if lo <= t < mid and not math.isnan(m)), default=math.nan)
        print(f"{sc:2d} {FIG3_SCENARIOS[sc - 1]:>5} | "
              + " ".join(ms(res.settled[p][k]) for p in PROTOCOLS)
              + f" | {ms(peak)} | {res.roles[k]}")
    print("whole run: " + ", ".join(f"{p} {ms(res.overall[p]).strip()} ms" for p in PROTOCOLS)
          + f"; hybrid role changes {res.stats['hybrid'].get('role_changes')}, "
          f"null messages {res.stats['hybrid'].get('nulls')}")


def fig1_markdown(rows, seed: int) -> str:
    """Figure 1's table as the page quotes it."""
    lines = [f"Seed {seed}, {FIG1['n']} processes, {FIG1['duration']:g} s per run, latency "
             "in ms.", "", "| D (ms) | token-site | paper 2D | ratio | symmetric | "
             "paper D + t | ratio |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.d * 1e3:.0f} | {ms(r.token).strip()} | {ms(r.two_d).strip()} | "
                     f"{r.token / r.two_d:.3f} | {ms(r.symmetric).strip()} | "
                     f"{ms(r.d_plus_t).strip()} | {r.symmetric / r.d_plus_t:.3f} |")
    lines += ["", f"The curves cross at a measured D = {fig1_crossover(rows) * 1e3:.0f} ms "
              f"(the paper: D = t = {rows[0].t * 1e3:.0f} ms)."]
    return "\n".join(lines) + "\n"


def fig3_markdown_rows(rows, seed: int, duration: float, cv2: bool = False) -> str:
    """Figure 3's table (``cv2``: the shorter one of the other variance reading)."""
    lines = [f"Seed {seed}, {duration:g} s per scenario, latency in ms."]
    if cv2:
        lines += ["", "| sc | loads | token-site | symmetric | hybrid | hybrid / best "
                  "baseline |", "|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r.scenario} | {r.loads} | {ms(r.latency['token-site']).strip()}"
                         f" | {ms(r.latency['symmetric']).strip()} | "
                         f"{ms(r.latency['hybrid']).strip()} | "
                         f"{r.latency['hybrid'] / r.best_baseline:.3f} |")
    else:
        lines += ["", "| sc | loads | token-site | paper 2D | symmetric | paper D + t | "
                  "hybrid | hybrid / best baseline | hybrid roles (Figure 2 = observed) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            same = r.observed_roles if r.expected_roles == r.observed_roles else \
                f"{r.expected_roles} != {r.observed_roles}"
            lines.append(f"| {r.scenario} | {r.loads} | {ms(r.latency['token-site']).strip()}"
                         f" | {ms(r.paper['token-site']).strip()} | "
                         f"{ms(r.latency['symmetric']).strip()} | "
                         f"{ms(r.paper['symmetric']).strip()} | "
                         f"{ms(r.latency['hybrid']).strip()} | "
                         f"{r.latency['hybrid'] / r.best_baseline:.3f} | {same} |")
    hy = [r.latency["hybrid"] for r in rows]
    lines += ["", f"Hybrid {min(hy) * 1e3:.0f} .. {max(hy) * 1e3:.0f} ms over the "
              f"scenarios; worst hybrid / better baseline "
              f"{max(r.latency['hybrid'] / r.best_baseline for r in rows):.3f}."]
    return "\n".join(lines) + "\n"


def fig5_markdown_rows(results, seed: int, k: int) -> str:
    """Figure 5's per-scenario table for the sources of ``results`` (same k)."""
    lines = [f"Seed {seed}, mean-shift k = {k}, {results[0].dwell:g} s per scenario; latency "
             "in ms over each scenario's second half (settled); baselines "
             + " / ".join(r.source for r in results) + ".", "",
             "| sc | loads | token-site | symmetric | " + " | ".join(
                 f"hybrid, {r.source} | roles" for r in results) + " |",
             "|---|---|---|---|" + "---|---|" * len(results)]
    for i, sc in enumerate(results[0].scenarios):
        base = " | ".join(" / ".join(ms(r.settled[p][i]).strip() for r in results)
                          for p in ("token-site", "symmetric"))
        hy = " | ".join(f"{ms(r.settled['hybrid'][i]).strip()} | {r.roles[i]}"
                        for r in results)
        lines.append(f"| {sc} | {FIG3_SCENARIOS[sc - 1]} | {base} | {hy} |")
    lines += ["", "| sources | token-site | symmetric | hybrid | hybrid role changes |",
              "|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.source} | " + " | ".join(ms(r.overall[p]).strip()
                                                     for p in PROTOCOLS)
                     + f" | {r.stats['hybrid'].get('role_changes')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--figure", choices=("1", "3", "5"), action="append",
                    help="only these figures (repeatable; default all)")
    ap.add_argument("--dwell", type=float, default=None,
                    help=f"seconds per scenario in Figure 5 (default {FIG5_DWELL:g})")
    ap.add_argument("--mean-shift-k", type=int, default=FIG5_K,
                    help=f"the hybrid's mean-shift detector in Figure 5 (default {FIG5_K}; "
                    "001's value is lost)")
    ap.add_argument("--n", type=int, default=30, help="Figure 1's processes (default 30)")
    ap.add_argument("--duration", type=float, default=None,
                    help="seconds per run of Figures 1 and 3 (default 12; quick 4)")
    ap.add_argument("--out", default="out/hybrid-figures", help="folder for the plots")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--sensitivity", action="store_true",
                    help="the claims over the values the paper does not give")
    ap.add_argument("--demo", action="store_true", help="tomkit demo's hybrid step")
    ap.add_argument("--write-docs", action="store_true",
                    help="rewrite docs/hybrid-figures.md's generated sections of what ran")
    a = ap.parse_args(argv)
    if a.write_docs and (a.quick or a.dwell or a.duration or a.n != 30):
        ap.error("--write-docs writes the page's own configurations only")
    figs = set(a.figure or (() if a.sensitivity or a.demo else ("1", "3", "5")))
    sections: dict[str, str] = {}
    out = None if a.no_plots else Path(a.out)
    print(f"seed {a.seed}")
    wall = time.perf_counter()
    if "1" in figs:
        dur = a.duration or (4.0 if a.quick else 12.0)
        rows = fig1((0.05, 0.2) if a.quick else FIG1_DELAYS, n=a.n, duration=dur,
                    warmup=min(2.0, dur / 3), seed=a.seed)
        print_fig1(rows, out, a.n)
        sections["fig1"] = fig1_markdown(rows, a.seed)
    if "3" in figs:
        sc = (1, 4, 6, 9) if a.quick else tuple(range(1, 10))
        dur = a.duration or (4.0 if a.quick else 12.0)
        rows3 = fig3(sc, duration=dur, warmup=1.0, seed=a.seed)
        print_fig3(rows3, "")
        sections["fig3"] = fig3_markdown_rows(rows3, a.seed, dur)
        if not a.quick:
            rows3 = fig3(sc, seed=a.seed, topology=fig3_topology(reading="cv2"), **FIG3_CV2)
            print_fig3(rows3, ", variances read as cv2 (WAN cv2 0.3: the FIFO wait "
                       "dominates)")
            sections["fig3-cv2"] = fig3_markdown_rows(rows3, a.seed, FIG3_CV2["duration"],
                                                      cv2=True)
    if "5" in figs:
        results = []
        if a.quick:
            results.append(fig5(a.dwell or 10.0, "quasi-periodic", a.seed,
                                scenarios=(1, 4, 9, 6),
                                hybrid_options={"mean_shift_k": a.mean_shift_k}))
        else:
            for source in ("quasi-periodic", "poisson"):
                results.append(fig5(a.dwell or FIG5_DWELL, source, a.seed,
                                    hybrid_options={"mean_shift_k": a.mean_shift_k}))
        for res in results:
            print_fig5(res, a.mean_shift_k)
        if out is not None:
            print(f"plot: {plot_fig5(results, out / 'fig5.png')}")
        sections[f"fig5-k{a.mean_shift_k}"] = fig5_markdown_rows(results, a.seed,
                                                                 a.mean_shift_k)
    if a.sensitivity:
        print("\nFigure 3's claims against the variance reading and the low rate")
        c3 = fig3_claims(seed=a.seed, log=print, **SENS3)
        sections["sensitivity-fig3"] = fig3_markdown(c3, a.seed, SENS3["duration"])
        print(sections["sensitivity-fig3"])
        print("Figure 5's claims against k, the variance reading, the low rate, the dwell")
        c5 = fig5_claims(seed=a.seed, log=print)
        sections["sensitivity-fig5"] = fig5_markdown(c5, a.seed)
        print(sections["sensitivity-fig5"])
    if a.demo:
        res = run_demo(Path(a.out) / "demo", a.seed)
        sections["demo"] = demo_markdown(res)
        print("\ntomkit demo's hybrid step\n" + sections["demo"])
    if a.write_docs:
        for name, body in sections.items():
            try:
                changed = write_section(DOC, name, body)
            except ValueError as e:
                print(f"{DOC.name}: {e}; not written")
                continue
            print(f"{DOC.name}: section {name} {'rewritten' if changed else 'unchanged'}")
    print(f"\n{time.perf_counter() - wall:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
