"""The aggregate report of a scan: per protocol and configuration, verdict counts by
property, the send-to-delivery latency distribution and the index-of-latency distribution.

Latency: time of a process's first delivery of m minus the time of m's first send, where
both carry a time (the definition of checker/properties/latency.py). Count, mean, minimum
and maximum are exact. Quantiles come from a histogram with logarithmic buckets (bucket k
of sign s holds the values x with s = sign(x) and (1 + ALPHA)^k <= |x| < (1 + ALPHA)^(k+1),
one bucket holds the zeros), which Spark builds with one hash aggregation (or the files
engine's tasks as they check, ``summary.py``; histograms merge exactly): the q quantile
is read in the bucket that holds the ceil(q * count)-th smallest value, as the bucket's
middle clamped to the least and greatest value in it, so its relative error is below
ALPHA / 2 (exact when the bucket's values are equal). Spark's ``percentile_approx`` gives
the same accuracy in rank only, at four times the cost (measured). Index of
latency (000 section 6: the processors a process has heard from when it delivers m) is
read from the deliveries' ``x_index_of_latency`` extension field, which the simulator
writes; data sets without it have none.

Both ways of computing the report (Spark aggregations here, the tasks' summaries of the
files engine) fill a ``summary.Summary``, and :func:`document` turns it into the report.
"""

from __future__ import annotations

import math
from importlib.metadata import version
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from tomkit.checker.spark.properties import NAMES
from tomkit.checker.spark.summary import ALPHA, Summary
from tomkit.traces.schema import FORMAT_VERSION

__all__ = ["ALPHA", "QUANTILES", "document", "latencies", "summarize", "to_text"]

QUANTILES = [0.5, 0.9, 0.99]
REJECTED_SHOWN = 20


def latencies(firsts: DataFrame) -> DataFrame:
    """protocol, config, lat and its bucket (s, k) of each latency of ``firsts`` (first
    deliveries): grouped by protocol, config, s and k, the histogram."""
    if "lat" in firsts.columns:  # the arrow and files engines' latencies, from their pass
        sel = firsts.filter(F.col("lat").isNotNull()).select("protocol", "config", "lat")
    else:
        lat = (F.col("time") - F.col("send_time")).alias("lat")
        sel = firsts.filter(F.col("time").isNotNull() & F.col("send_time").isNotNull()) \
            .select("protocol", "config", lat)
    # Spark's log is null at 0: the zeros' bucket is (0, 0), as summary.bucket_of has it
    return sel.select("protocol", "config", "lat", F.signum("lat").cast("int").alias("s"),
                      F.coalesce(F.floor(F.log(F.abs("lat")) / math.log1p(ALPHA)),
                                 F.lit(0)).alias("k"))


def summarize(buckets: list[tuple]) -> dict[str, Any]:
    """Count, mean, max and the QUANTILES of a histogram: (sign, k, count, sum, min, max)
    per bucket (module docstring)."""
    buckets = sorted(buckets, key=lambda b: (b[0], b[0] * b[1]))
    n = sum(b[2] for b in buckets)
    out: dict[str, Any] = {"deliveries": n, "mean": sum(b[3] for b in buckets) / n,
                           "max": max(b[5] for b in buckets)}
    for q in QUANTILES:
        rank, seen = max(1, math.ceil(q * n)), 0
        for s, k, count, _, lo, hi in buckets:
            seen += count
            if seen >= rank:
                mid = 0.0 if s == 0 else s * (1 + ALPHA) ** (k + 0.5)
                out[f"p{round(q * 100)}"] = min(max(mid, lo), hi)
                break
    return out


def _iol_doc(hist: dict[float, int]) -> dict[str, Any]:
    n = sum(hist.values())
    return {"histogram": {str(int(v) if v.is_integer() else v): c
                          for v, c in sorted(hist.items())},
            "deliveries": n, "mean": sum(v * c for v, c in hist.items()) / n}


def document(summary: Summary, paths: list[str], fmt: str,
             listed: list[dict[str, Any]]) -> dict[str, Any]:
    """The report (``report.json``) of a summary; ``listed``: the rejected records to show
    (the first of them by source and position)."""
    groups = [{"protocol": key[0], "config": key[1], "traces": g.traces, "events": g.events,
               "counts": g.counts,
               "latency": summarize([(s, k, *b) for (s, k), b in g.latency.items()])
               if g.latency else None,
               "index_of_latency": _iol_doc(g.iol) if g.iol else None}
              for key, g in sorted(summary.groups.items())]
    examples = [{"property": p, "trace": summary.examples[p][0][2],
                 "explanation": summary.examples[p][1]} for p in NAMES if p in summary.examples]
    total = {"traces": sum(g["traces"] for g in groups),
             "events": sum(g["events"] for g in groups),
             "rejected": summary.rejected + summary.seq_records,
             "rejected_listed_of": summary.rejected + summary.seq_traces}
    violated = any(g["counts"][p]["violated"] for g in groups for p in NAMES)
    # the first keys those of every command's JSON (docs/cli.md, "One JSON shape")
    return {
        "tomkit": version("tomkit"), "format_version": FORMAT_VERSION,
        # as tomkit check says it: nothing judged is not "holds"
        "verdict": "violated" if violated else "holds" if total["traces"] else "no trace checked",
        "input": ", ".join(paths), "format": fmt, "properties": NAMES,
        "exit_code": 1 if violated else (2 if total["rejected"] else 0),
        "summary": total, "groups": groups, "rejected": listed, "examples": examples,
    }


def to_text(doc: dict[str, Any]) -> str:
    out = []
    s = doc["summary"]
    out.append(f"tomkit scan: {s['traces']:,} trace(s), {s['events']:,} events checked, "
               f"{s['rejected']:,} record(s) rejected ({doc['format']}, {doc['input']})")
    out.append("properties: " + ", ".join(doc["properties"]))
    if doc["rejected"]:
        out.append("")
        out.append(f"rejected ({s['rejected']:,} records):")
        for r in doc["rejected"][:REJECTED_SHOWN]:
            where = r["source"] + (f":{r['line']}" if r.get("line") is not None
                                   else f": row {r['row']}" if r.get("row") is not None else "")
            field = f"field '{r['field']}': " if r.get("field") else ""
            out.append(f"  {where}: {field}{r['message']}")
        if s["rejected_listed_of"] > REJECTED_SHOWN:
            out.append("  ... and more (see rejected/ in the output)")
    width = max(len(p) for p in doc["properties"]) + 2
    for g in doc["groups"]:
        out.append("")
        out.append(f"protocol {g['protocol'] or '-'}, config {g['config'] or '-'}: "
                   f"{g['traces']:,} traces, {g['events']:,} events")
        out.append(f"  {'property':<{width}}{'holds':>10}{'violated':>10}{'unknown':>10}")
        for p in doc["properties"]:
            c = g["counts"][p]
            out.append(f"  {p:<{width}}{c['holds']:>10,}{c['violated']:>10,}"
                       f"{c['unknown']:>10,}")
        lat = g.get("latency")
        if lat:
            out.append(f"  latency over {lat['deliveries']:,} deliveries: mean "
                       f"{lat['mean']:.4g} s, p50 {lat['p50']:.4g} s, p90 {lat['p90']:.4g} s, "
                       f"p99 {lat['p99']:.4g} s, max {lat['max']:.4g} s")
        iol = g.get("index_of_latency")
        if iol:
            hist = ", ".join(f"{k}: {v:,}" for k, v in iol["histogram"].items())
            out.append(f"  index of latency: mean {iol['mean']:.3f} ({hist})")
    if doc["examples"]:
        out.append("")
        out.append("violations (first of each property):")
        for ex in doc["examples"]:
            out.append(f"  {ex['property']} in trace {ex['trace']}: {ex['explanation']}")
    out.append("")
    out.append(f"verdict: {doc['verdict']}")
    return "\n".join(out) + "\n"
