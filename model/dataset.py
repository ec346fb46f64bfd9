"""Trace data sets at scale: simulated protocols, faulty variants, a partitioned Parquet layout.

A data set is a directory ``DIR/protocol=P/config=C/part-NNNNN.parquet`` (Hive-style
partitions, which Spark, DuckDB and pyarrow discover), every file in trace format v1
(``traces/schema.py``) with each trace's records together, plus two side files that
readers skip (names starting with ``_``): ``_generate.json`` (the command, the seed, the
counts) and ``_ground_truth.jsonl`` (one line per faulty trace: which variant made it
and what it is expected to violate).

Where traces come from
----------------------
* Clean: the discrete-event simulator (``model/sim.py``, after 000 section 6 and 001
  section 3) running one of ``model.rules.RULES`` (all-ack, toto, s-toto, g-toto,
  gl-toto) in one of :data:`CONFIGS` (n, delta, source, rate). Small traces: with n = 4
  and 11 messages a trace has about 100 events (sends, recvs, deliveries).
* Faulty, a ``faulty`` fraction of the traces, the variants taken round robin:

  - ``mutant:majority``: the broken rule of ``model/toto/mutants.py`` run in the same
    simulator (partition ``protocol=mutant-majority``). It violates total order in about
    40 % of runs; the rest of its traces are correct executions, so its ground truth says
    "may violate". Runs that would never end are cut (``mutants.Runaway``) and retried
    with the next seed.
  - ``reorder``: a sequencer fault. A clean simulated trace of the partition's protocol in
    which one process delivers two adjacent messages in swapped order (as a sequencer that
    reorders its output would): total order (weak, strong, global) is violated whenever
    another process delivers both, and FIFO or causal order may be too.
  - ``planted:<fault>``: the planted faults of ``traces.generate.faulty_trace`` (one per
    kind in ``traces.generate.FAULTS``, with their exact ground truth
    ``also_violates``), in partition ``protocol=planted``.

The simulator runs roughly 10-20 thousand deliveries a second per core, so a million
simulated traces take hours on a small machine. :func:`write_bulk` is the fast path for
benchmarks: clean traces from ``traces.generate.bulk_table`` (the same synthetic
sequencer model as the planted faults; about a million events a second) plus planted
faults, in partition ``protocol=synthetic``.

Determinism: trace k of a partition is made from the seed sequence (seed, partition, k);
the worker processes only change who computes it, not what.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tomkit.traces.generate import FAULTS, bulk_table, faulty_trace
from tomkit.traces.writer import write_records, write_table

if TYPE_CHECKING:
    from tomkit.model.sim import SimConfig, SimResult

__all__ = ["CONFIGS", "PROTOCOLS", "SimSpec", "generate", "simulate_mutant", "write_bulk"]

PROTOCOLS = ("all-ack", "toto", "s-toto", "g-toto", "gl-toto")
TRACES_PER_FILE = 1000  # a task for one worker: a few seconds of simulation
MUTANT = "majority"


@dataclass(frozen=True)
class SimSpec:
    """One configuration of the simulator: n processes, delta, source, rate, messages."""

    n: int
    delta: int | None
    source: str
    rate: float
    messages: int
    mean_delay: float = 0.001

    @property
    def name(self) -> str:
        d = self.delta if self.delta is not None else (self.n + 1) // 2
        return f"n{self.n}-d{d}-{self.source}-r{self.rate:g}"


#: the configurations every protocol runs in (about 100 events a trace); G-ToTo and
#: GL-ToTo also allow delta below n/2 (002 section 4)
CONFIGS: dict[str, list[SimSpec]] = {
    p: [SimSpec(4, 2, "poisson", 100.0, 11), SimSpec(4, 2, "periodic", 100.0, 11)]
    for p in PROTOCOLS
}
for _p in ("g-toto", "gl-toto"):
    CONFIGS[_p].append(SimSpec(4, 1, "poisson", 100.0, 11))
#: the mutant needs concurrency to misorder: 8 processes, 300 msg/s each, 10 ms delays
MUTANT_SPEC = SimSpec(8, 4, "poisson", 300.0, 6, mean_delay=0.01)
PLANTED_CONFIG = "n4-m11"
PLANTED_KW = {"n_processes": 4, "n_messages": 11, "views": False}


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1)[0])


def _sim_records(protocol: str, spec: SimSpec, trace_id: str, seed: int) -> list[dict]:
    from tomkit.model.net.links import Delay
    from tomkit.model.sim import SimConfig, simulate

    cfg = SimConfig(protocol=protocol, n=spec.n, options={"delta": spec.delta},
                    source=spec.source, rate=spec.rate, messages=spec.messages,
                    delay=Delay("exponential", spec.mean_delay), seed=seed, trace_id=trace_id)
    return simulate(cfg).records


def _mutant_records(trace_id: str, seed: int) -> list[dict]:
    from tomkit.model.net.links import Delay
    from tomkit.model.sim import Runaway, SimConfig

    s = MUTANT_SPEC
    for attempt in range(100):
        cfg = SimConfig(protocol="toto", n=s.n, options={"delta": s.delta, "rule": MUTANT},
                        source=s.source, rate=s.rate,
                        messages=s.messages, delay=Delay("exponential", s.mean_delay),
                        seed=_seed(seed, attempt), trace_id=trace_id)
        try:
            return simulate_mutant(cfg).records
        except Runaway:
            continue
    raise RuntimeError(f"{trace_id}: every mutant run ran away")


def reorder(records: list[dict], rng: np.random.Generator) -> tuple[list[dict], dict]:
    """The sequencer fault: one process delivers two adjacent messages swapped. Returns the
    new records and what was swapped."""
    by_proc: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        if r["kind"] == "deliver":
            by_proc.setdefault(r["process"], []).append(i)
    procs = sorted(p for p, rows in by_proc.items() if len(rows) >= 2)
    if not procs:
        raise ValueError("no process delivers two messages")
    p = procs[int(rng.integers(len(procs)))]
    rows = by_proc[p]
    j = int(rng.integers(len(rows) - 1))
    a, b = rows[j], rows[j + 1]
    out = [dict(r) for r in records]
    for key in ("msg", "x_index_of_latency"):
        if key in out[a] or key in out[b]:
            out[a][key], out[b][key] = records[b].get(key), records[a].get(key)
    return out, {"process": p, "messages": [records[a]["msg"], records[b]["msg"]]}


ORDER = ["total-order-weak", "total-order-strong", "global-order"]


def _make_trace(kind: str, protocol: str, spec_name: str, trace_id: str,
                seed: int) -> tuple[list[dict], dict | None]:
    """Records of one trace of the given kind, and its ground truth (None when clean)."""
    if kind == "clean":
        spec = next(s for s in CONFIGS[protocol] if s.name == spec_name)
        return _sim_records(protocol, spec, trace_id, seed), None
    if kind == "reorder":
        spec = next(s for s in CONFIGS[protocol] if s.name == spec_name)
        recs = _sim_records(protocol, spec, trace_id, seed)
        recs, what = reorder(recs, np.random.default_rng(seed))
        return recs, {"variant": "reorder", "expected": ORDER, "may_also": ["causal-order",
                                                                            "fifo-order"],
                      **what}
    if kind == "mutant":
        return _mutant_records(trace_id, seed), {"variant": f"mutant:{MUTANT}",
                                                 "expected": [], "may_also": ORDER}
    fault = kind.split(":", 1)[1]
    recs, truth = faulty_trace(trace_id, fault, seed=seed, **PLANTED_KW)
    return recs, {"variant": kind, "expected": [truth["property"], *truth["also_violates"]],
                  "may_also": [], "processes": truth["processes"],
                  "messages": truth["messages"]}


def _plan(protocols: list[str], n_traces: int, faulty: float,
          seed: int) -> dict[tuple[str, str], list[tuple]]:
    """Partition -> [(trace id, kind, base protocol, base config, seed)], deterministic in
    ``seed``."""
    rng = np.random.default_rng(seed)
    parts = [(p, s.name) for p in protocols for s in CONFIGS[p]]
    n_bad = min(n_traces, int(round(faulty * n_traces)))
    bad = np.zeros(n_traces, bool)
    if n_bad:
        bad[rng.choice(n_traces, n_bad, replace=False)] = True
    variants = ["mutant", "reorder", *(f"planted:{f}" for f in FAULTS)]
    plan: dict[tuple[str, str], list[tuple]] = {}
    nth_bad = 0
    for k in range(n_traces):
        pi = k % len(parts)
        protocol, cfg = parts[pi]
        kind = "clean"
        if bad[k]:
            kind = variants[nth_bad % len(variants)]
            nth_bad += 1
        if kind == "mutant":
            key = (f"mutant-{MUTANT}", MUTANT_SPEC.name)
        elif kind.startswith("planted:"):
            key = ("planted", PLANTED_CONFIG)
        else:
            key = (protocol, cfg)
        tid = f"{key[0]}/{key[1]}/{k}"
        plan.setdefault(key, []).append((tid, kind, protocol, cfg, _seed(seed, k)))
    return plan


def _task(args: tuple) -> tuple[int, int, list[dict]]:
    """Worker: make the traces of one part file and write it."""
    path, items = args
    records: list[dict] = []
    truths = []
    for tid, kind, protocol, cfg, s in items:
        recs, truth = _make_trace(kind, protocol, cfg, tid, s)
        records += recs
        if truth is not None:
            truths.append({"trace": tid, **truth})
    write_records(path, records, grouped=True)
    return len(items), len(records), truths


def generate(out: str, protocols: list[str], n_traces: int, *, faulty: float = 0.0,
             seed: int = 1, workers: int | None = None, progress: bool = True) -> dict:
    """Write a data set of ``n_traces`` traces spread evenly over ``protocols`` and their
    configurations (module docstring). The directory is replaced atomically. Returns the
    summary stored in ``_generate.json``."""
    unknown = [p for p in protocols if p not in CONFIGS]
    if unknown:
        raise ValueError(f"unknown protocol {', '.join(unknown)}; known: {', '.join(CONFIGS)}")
    if not 0 <= faulty <= 1:
        raise ValueError(f"--faulty must be in [0, 1], got {faulty}")
    plan = _plan(protocols, n_traces, faulty, seed)
    tmp = _tmp_dir(out)
    tasks = []
    for (protocol, cfg), items in sorted(plan.items()):
        d = os.path.join(tmp, f"protocol={protocol}", f"config={cfg}")
        os.makedirs(d, exist_ok=True)
        for j in range(0, len(items), TRACES_PER_FILE):
            tasks.append((os.path.join(d, f"part-{j // TRACES_PER_FILE:05d}.parquet"),
                          items[j:j + TRACES_PER_FILE]))
    bar = _bar(progress, n_traces)
    n_rec = 0
    truths: list[dict] = []
    try:
        workers = workers or os.cpu_count() or 1
        with ProcessPoolExecutor(workers) as pool:
            try:
                for k, r, t in pool.map(_task, tasks):
                    n_rec += r
                    truths += t
                    if bar is not None:
                        bar.update(k)
            except BaseException:  # a stop (Ctrl-C, SIGTERM) waits for the tasks under
                pool.shutdown(cancel_futures=True)  # way, not for the whole data set
                raise
        summary = {"seed": seed, "traces": n_traces, "records": n_rec, "faulty": faulty,
                   "faulty_traces": len(truths), "protocols": protocols,
                   "partitions": sorted(f"protocol={p}/config={c}" for p, c in plan)}
        _side_files(tmp, summary, truths)
        _commit(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if bar is not None:
            bar.close()
    return summary


def write_bulk(out: str, n_traces: int, *, faulty: float = 0.0, seed: int = 1,
               n_processes: int = 4, n_messages: int = 20, progress: bool = False) -> dict:
    """The fast path: ``n_traces`` clean synthetic traces from ``bulk_table`` (about
    ``n_messages * (n_processes + 1)`` events each: 100 by default) in
    ``protocol=synthetic``, and ``faulty * n_traces`` planted faults in
    ``protocol=planted``. Replaced atomically."""
    tmp = _tmp_dir(out)
    cfg = f"n{n_processes}-m{n_messages}"
    try:
        d = os.path.join(tmp, "protocol=synthetic", f"config={cfg}")
        os.makedirs(d)
        bar = _bar(progress, n_traces)
        n_rec = 0
        for i, table in enumerate(bulk_table(n_traces, n_processes=n_processes,
                                             n_messages=n_messages, seed=seed)):
            n_rec += write_table(os.path.join(d, f"part-{i:05d}.parquet"), table,
                                 grouped=True)
            if bar is not None:
                bar.update(table.num_rows // (n_messages * (n_processes + 1)))
        if bar is not None:
            bar.close()
        n_bad = int(round(faulty * n_traces))
        truths, records = [], []
        faults = list(FAULTS)
        for k in range(n_bad):
            fault = faults[k % len(faults)]
            tid = f"planted/{cfg}/{k}"
            recs, truth = faulty_trace(tid, fault, seed=[seed, k], n_processes=n_processes,
                                       n_messages=n_messages, recv=False)
            records += recs
            truths.append({"trace": tid, "variant": f"planted:{fault}",
                           "expected": [truth["property"], *truth["also_violates"]]})
        if records:
            d = os.path.join(tmp, "protocol=planted", f"config={cfg}")
            os.makedirs(d)
            n_rec += write_records(os.path.join(d, "part-00000.parquet"), records, grouped=True)
        summary = {"seed": seed, "traces": n_traces + n_bad, "records": n_rec,
                   "faulty_traces": n_bad, "generator": "traces.generate.bulk_table"}
        _side_files(tmp, summary, truths)
        _commit(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return summary


def ground_truth(path: str) -> dict[str, dict]:
    """trace id -> ground truth, from a data set's ``_ground_truth.jsonl``."""
    with open(os.path.join(path, "_ground_truth.jsonl")) as f:
        return {d["trace"]: d for d in map(json.loads, f)}


def _bar(progress: bool, total: int):
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=" traces", unit_scale=True, file=sys.stderr,
                desc="generating")


def _tmp_dir(out: str) -> str:
    if not str(out):  # abspath("") is the current folder, which _commit replaces whole
        raise ValueError("out is an empty name; give a new folder (an empty one would "
                         "name the current folder, which is replaced whole)")
    out = os.path.abspath(out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = f"{out}.tmp-{uuid.uuid4().hex[:12]}"
    os.makedirs(tmp)
    return tmp


def _side_files(tmp: str, summary: dict, truths: list[dict]) -> None:
    with open(os.path.join(tmp, "_generate.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(tmp, "_ground_truth.jsonl"), "w") as f:
        for t in sorted(truths, key=lambda t: t["trace"]):
            f.write(json.dumps(t) + "\n")


def _commit(tmp: str, out: str) -> None:
    """Move the finished directory into place, replacing an older one."""
    out = os.path.abspath(out)
    old = None
    if os.path.exists(out):
        old = f"{out}.old-{uuid.uuid4().hex[:12]}"
        os.rename(out, old)
    os.rename(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def part_files(path: str) -> Iterator[str]:
    """The data files of a data set, in a stable order."""
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        for f in sorted(files):
            if not f.startswith(("_", ".")) and f.endswith((".parquet", ".jsonl", ".jsonl.gz")):
                yield os.path.join(root, f)


def simulate_mutant(config: SimConfig, max_events: int | None = None) -> SimResult:
    """Run ``model.sim.simulate(config)`` where ``config.options["rule"]`` names a mutant,
    cut with :class:`~tomkit.model.sim.Runaway` after ``max_events`` events (default
    50 * messages * n^2).

    Why a cut: a stalled process whose view stops changing sends idle ACKs forever. The
    cut is an event budget, not a clock, so the same runs are cut on every machine; a
    finished run of the data sets' mutant spec takes at most 229 events (300 seeds
    measured), a stalled one never ends."""
    from tomkit.model.sim import simulate  # lazily: the scan imports this module

    if max_events is None:
        max_events = 50 * config.messages * config.n ** 2
    return simulate(dataclasses.replace(config, max_events=max_events))
