"""Rendering a CheckReport: readable text for people, JSON for machines."""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

import numpy as np

from tomkit.checker.result import Verdict
from tomkit.traces.schema import FORMAT_VERSION

if TYPE_CHECKING:
    from tomkit.checker.engine import CheckReport

ALL_TRACES_UP_TO = 10  # below this many traces, every verdict is listed
DETAILED_UP_TO = 20  # traces with violations shown in full
REJECTED_SHOWN = 20


def latency_summary(report: CheckReport) -> dict[str, float] | None:
    if not report.latencies:
        return None
    lat = np.concatenate(report.latencies)
    if len(lat) == 0:
        return None
    p50, p99 = np.percentile(lat, [50, 99])
    return {"deliveries": int(len(lat)), "mean": float(lat.mean()), "p50": float(p50),
            "p99": float(p99), "max": float(lat.max()),
            "per_process": {p: {"deliveries": k, "mean": total / k, "max": top}
                            for p, (k, total, top) in sorted(report.latency_by_process.items())},
            "slowest": [{"latency": x, "trace": t, "process": p, "msg": m}
                        for x, t, p, m in report.slowest]}


def overall(report: CheckReport) -> str:
    if report.violated:
        return "violated"
    if not report.outcomes:  # not "holds": nothing was judged
        return "no trace checked"
    judged = report.properties if report.judged is None else report.judged
    if any(report.counts[n][Verdict.UNKNOWN] for n in judged if n in report.counts):
        return "holds (some properties unknown)"
    return "holds"


def to_text(report: CheckReport) -> str:
    out: list[str] = []
    n_tr = len(report.outcomes)
    n_ev = sum(o.events for o in report.outcomes)
    out.append(f"tomkit check: {len(report.files)} file(s), {n_tr} trace(s), {n_ev:,} events "
               f"checked ({report.n_accepted:,} records accepted, {report.n_rejected:,} "
               "rejected)")
    if report.judged is not None:
        out.append(f"guarantee {report.guarantee}: " + ", ".join(report.judged))
        rest = [n for n in report.properties if n not in report.judged]
        if rest:
            out.append("also checked, for the profile table: " + ", ".join(rest))
    else:
        out.append("properties: " + ", ".join(report.properties))
    if report.rejected:
        out.append("")
        out.append(f"rejected ({report.n_rejected:,} records):")
        for err in report.rejected[:REJECTED_SHOWN]:
            out.append(f"  {err}")
        if len(report.rejected) > REJECTED_SHOWN:
            out.append(f"  ... and {len(report.rejected) - REJECTED_SHOWN} more errors")
    show_all = n_tr <= ALL_TRACES_UP_TO
    width = max((len(p) for p in report.properties), default=10) + 2
    detailed = 0
    judged = set(report.properties if report.judged is None else report.judged)
    bad_traces = [o for o in report.outcomes
                  if any(v == Verdict.VIOLATED for n, v in o.verdicts.items() if n in judged)]
    for o in report.outcomes:
        bad = o in bad_traces
        if not (show_all or bad):
            continue
        if bad and detailed >= DETAILED_UP_TO:
            continue
        detailed += bad
        out.append("")
        out.append(f"trace {o.trace}  [{', '.join(o.sources)}; {o.events} events]")
        for name, v in o.verdicts.items():
            res = o.results.get(name)
            if v == Verdict.HOLDS and not show_all:
                continue
            if report.judged is not None and name not in report.judged:
                continue  # in the profile table below
            label = "VIOLATED" if v == Verdict.VIOLATED else str(v)
            line = f"  {name:<{width}}{label}"
            if res is not None and res.explanation:
                line += f"  {res.explanation}"
            out.append(line)
            if res is not None and v == Verdict.VIOLATED:
                for w in res.witness:
                    out.append(f"      {w.describe()}")
    if len(bad_traces) > DETAILED_UP_TO:
        out.append("")
        out.append(f"... and {len(bad_traces) - DETAILED_UP_TO} more traces with violations "
                   "(--format json lists them all)")
    out.append("")
    out.append(f"{'property':<{width}}{'holds':>9}{'violated':>10}{'unknown':>9}")
    for name in report.properties:
        c = report.counts[name]
        out.append(f"{name:<{width}}{c[Verdict.HOLDS]:>9}{c[Verdict.VIOLATED]:>10}"
                   f"{c[Verdict.UNKNOWN]:>9}")
    reasons: dict[tuple[str, str], int] = {}
    for o in report.outcomes:
        for name, res in o.results.items():
            if res.verdict == Verdict.UNKNOWN:
                reasons[(name, res.explanation)] = reasons.get((name, res.explanation), 0) + 1
    for (name, why), k in reasons.items():
        out.append(f"  unknown: {name} on {k} trace(s): {why}")
    lat = latency_summary(report)
    if lat:
        out.append(f"latency over {lat['deliveries']:,} deliveries: mean {lat['mean']:.6g} s, "
                   f"p50 {lat['p50']:.6g} s, p99 {lat['p99']:.6g} s, max {lat['max']:.6g} s")
        if len(lat["per_process"]) <= 16:
            for p, d in lat["per_process"].items():
                out.append(f"  {p:<12} mean {d['mean']:.6g} s, max {d['max']:.6g} s "
                           f"({d['deliveries']:,} deliveries)")
        for d in lat["slowest"][:3]:
            out.append(f"  slow: {d['process']} delivers {d['msg']} of trace {d['trace']} "
                       f"after {d['latency']:.6g} s")
    if report.profiles:
        out.append("")
        out += profile_table(report)
    out.append("")
    out.append(f"verdict: {overall(report)}")
    return "\n".join(out) + "\n"


def profile_table(report: CheckReport) -> list[str]:
    """The guarantee profiles whose properties were all checked, strongest first:
    satisfied, unknown, or violated with the property and a trace that rule it out."""
    rows = report.profiles
    width = max(len(r.profile.name) for r in rows) + 2
    out = ["guarantees (strongest first):"]
    for r in rows:
        mark = " <- judged" if r.profile.name == report.guarantee else ""
        line = f"  {r.profile.name:<{width}}{r.verdict}{mark}"
        if r.verdict == "violated":
            more = (f" (and {r.violated_traces - 1} more traces)"
                    if r.violated_traces > 1 else "")
            line += f": {r.property} in trace {r.trace}{more}"
        out.append(line)
        if r.verdict == "violated" and r.explanation:
            out.append(f"  {'':<{width}}  {r.explanation}")
    return out


def to_json(report: CheckReport) -> str:
    return json.dumps(to_dict(report), indent=1) + "\n"


def to_dict(report: CheckReport) -> dict[str, Any]:
    """The report as plain data (what ``tomkit check --format json`` prints)."""
    return {
        "tomkit": version("tomkit"),
        "format_version": FORMAT_VERSION,
        # the text report's word (overall), without its note on unknown verdicts (the
        # counts hold them): "violated", "holds", or "no trace checked"; third, as in
        # every command's JSON (tomkit/cli/verdict_json.py)
        "verdict": overall(report).split(" (")[0],
        "properties": report.properties,
        # every setting the verdicts depend on, so a stored report says what it judged
        "options": report.options.as_dict(),
        "guarantee": report.guarantee,
        "judged": report.judged if report.judged is not None else report.properties,
        "profiles": [r.to_dict() for r in report.profiles],
        "files": [{"source": f.source, "format": f.fmt, "accepted": f.accepted,
                   "rejected": f.rejected, "grouped": f.grouped} for f in report.files],
        "rejected": [e.to_dict() for e in report.rejected],
        "summary": {
            "traces": len(report.outcomes),
            "events": sum(o.events for o in report.outcomes),
            "accepted": report.n_accepted,
            "rejected": report.n_rejected,
            "counts": {n: {str(v): report.counts[n][v] for v in Verdict}
                       for n in report.properties},
            "latency": latency_summary(report),
        },
        "traces": [
            {"trace": o.trace, "sources": o.sources, "events": o.events,
             "verdicts": {n: str(v) for n, v in o.verdicts.items()},
             "results": [r.to_dict() for r in o.results.values()]}
            for o in report.outcomes
        ],
    }


def plot_latency(report: CheckReport, path: str) -> bool:
    """Draw the latency distribution (with the bound, if any) as a PNG; False if there is
    no latency to draw."""
    if not report.latencies:
        return False
    lat = np.concatenate(report.latencies)
    if len(lat) == 0:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.hist(lat, bins=min(100, max(10, len(lat) // 20)), color="#4477aa")
    bound = report.options.latency_bound
    if bound is not None:
        ax.axvline(bound, color="#cc3311", linestyle="--", label=f"bound {bound:g} s")
        ax.legend()
    ax.set_xlabel("send-to-delivery latency (s)")
    ax.set_ylabel("deliveries")
    ax.set_title(f"latency of {len(lat):,} deliveries in {len(report.outcomes):,} trace(s)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True
