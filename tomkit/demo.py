"""`make demo`: the main job end to end on the embedded defaults.

Generates a small clean trace file and a small faulty one (one planted fault
per trace, of several kinds), checks both with `tomkit check`, prints the
verdicts and witnesses, and confirms that every planted fault was found and
nothing else was. Then simulates a ToTo run, checks it, replays it through the
reference model (`tomkit conform`), and does both again on a copy with two
deliveries swapped; proves ToTo with Z3 and refutes a broken rule; fuzzes a broken
rule and a broken TOMP variant, showing the shrunk trace the checker rejects; runs
TLC on ABCAST and a broken variant; scans a small data set with Spark; and runs
001's hybrid through load changes, switching roles, against its two baselines; and
a QoS-preserving (003) run with a crash, a join and a leave, checked against the
paper's guarantees, with its latency against n; and runs two Maelstrom node programs
under `tomkit run` with partitions, a correct total-order broadcast and a broken one
whose inconsistent order is found and drawn. Deterministic given --seed (the node
programs' own timing aside).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

from tomkit.checker.properties import properties
from tomkit.cli import main as tomkit
from tomkit.traces.generate import clean_trace, faulty_trace
from tomkit.traces.writer import write_records

FAULTS_SHOWN = ["swap", "gap", "cycle3", "causal", "fifo", "duplicate-delivery",
                "view-mismatch", "split-view"]


def banner(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 70 - len(text)))


def run(argv: list[str]) -> tuple[int, str]:
    print("$ tomkit " + " ".join(argv))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = tomkit(argv)
    return code, buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/demo")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"tomkit demo (seed {args.seed}), files in {out}/")

    banner("1. generate")
    clean = clean_trace("clean-plain", seed=args.seed)
    clean += clean_trace("clean-crash", seed=args.seed + 1, views=True, crash=True)
    clean_path = out / "clean.jsonl"
    write_records(clean_path, clean)
    print(f"{clean_path}: 2 correct executions ({len(clean)} events; one with a crash "
          "and a view change)")
    faulty, truths = [], []
    for i, fault in enumerate(FAULTS_SHOWN):
        recs, truth = faulty_trace(f"bad-{fault}", fault, seed=args.seed + i)
        faulty += recs
        truths.append(truth)
    faulty_path = out / "faulty.parquet"
    write_records(faulty_path, faulty)
    print(f"{faulty_path}: {len(truths)} executions, one planted fault each:")
    for t in truths:
        print(f"  {t['trace']:<24} breaks {t['property']}")

    banner("2. check the clean file")
    code, text = run(["check", str(clean_path), "-q", "--liveness"])
    print(text, end="")
    print(f"(exit {code})")
    ok = code == 0

    banner("3. check the faulty file against every safety property")
    named = safety_properties()
    safety = ",".join(named)
    at_end = set(properties()) - set(named)
    code, text = run(["check", str(faulty_path), "-q", "-p", safety])
    print(text, end="")
    print(f"(exit {code})")
    ok &= code == 1

    banner("4. did tomkit find exactly what was planted?")
    _, js = run(["check", str(faulty_path), "-q", "-p", safety, "--format", "json"])
    found = {t["trace"]: {p for p, v in t["verdicts"].items() if v == "violated"}
             for t in json.loads(js)["traces"]}
    for t in truths:
        want = {t["property"], *t["also_violates"]} - at_end
        got = found.get(t["trace"], set())
        mark = "ok" if got == want else "MISMATCH"
        ok &= got == want
        print(f"  {mark:<8} {t['trace']:<24} found: {', '.join(sorted(got))}")
    ok &= toto_run(out, args.seed)
    ok &= prove_and_fuzz(out, args.seed)
    ok &= fuzz_tomp(out, args.seed)
    ok &= tlc(out)
    ok &= spark(out, args.seed)
    ok &= hybrid(out, args.seed)
    ok &= qos(out, args.seed)
    ok &= maelstrom(out, args.seed)
    print("\ndemo " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def safety_properties() -> list[str]:
    """The registry's properties a cut trace cannot fail and that need no bound (not
    agreement, validity, liveness, member-liveness, latency, realtime-latency, rate):
    derived from each property's declaration (``Property.safety``), so a new property
    takes its place here by itself."""
    return [n for n, p in properties().items() if p.safety()]


def tail(text: str, lines: int) -> str:
    return "\n".join(text.rstrip("\n").splitlines()[-lines:]) + "\n"


def toto_run(out: Path, seed: int) -> bool:
    """A ToTo run simulated, checked and replayed through the reference model;
    then the same trace with two deliveries of one process swapped."""
    banner("5. simulate ToTo (n = 8, delta = 4) on a LAN")
    sim = out / "toto.parquet"
    code, text = run(["simulate", "--protocol", "toto", "--n", "8", "--delta", "4",
                      "--source", "poisson", "--rate", "12.5", "--messages", "800",
                      "--delay", "gamma", "--seed", str(seed), "--out", str(sim)])
    print(text, end="")
    ok = code == 0

    banner("6. check it against what the model promises, and replay it through the rule")
    code, text = run(["check", str(sim), "-q", "--guarantee", "model-toto-family"])
    print(text[text.index("guarantees (strongest first)"):], end="")
    ok &= code == 0
    code, text = run(["conform", "--protocol", "toto", "--delta", "4", str(sim)])
    print(tail(text, 3), end="")
    ok &= code == 0

    banner("7. the same run, with p3's 100th and 101st deliveries swapped")
    from tomkit.traces.reader import read_records

    recs = read_records(sim)
    at = [i for i, r in enumerate(recs) if r["process"] == "p3" and r["kind"] == "deliver"]
    i, j = at[99], at[100]
    recs[i]["msg"], recs[j]["msg"] = recs[j]["msg"], recs[i]["msg"]
    bad = out / "toto-swapped.parquet"
    write_records(bad, recs)
    code, text = run(["check", str(bad), "-q"])
    print("\n".join(ln for ln in text.splitlines()
                    if "VIOLATED" in ln or ln.startswith("verdict")))
    ok &= code == 1
    code, text = run(["conform", "--protocol", "toto", "--delta", "4", str(bad)])
    print("\n".join(ln for ln in text.splitlines() if "p3" in ln or "verdict" in ln))
    ok &= code == 1
    return ok



def prove_and_fuzz(out: Path, seed: int) -> bool:
    """A proof, a refuted mutant with its counterexample picture, and the fuzzer
    catching another mutant."""
    banner("8. prove ToTo with Z3; refute S-ToTo without internal stability")
    text = prove_demo(out / "prove")
    print(text)
    ok = "proved" in text and "counterexample" in text and (out / "prove").is_dir()

    banner("9. fuzz G-ToTo without 'NTail(G) > n - delta' (Hypothesis)")
    code, text = run(["fuzz", "g-toto-no-ntail", "--n", "5", "--delta", "1", "--examples",
                      "300", "--no-shrink", "--seed", str(seed), "--out",
                      str(out / "fuzz")])
    print(text, end="")
    return ok and code == 1


def fuzz_tomp(out: Path, seed: int) -> bool:
    """The one process machine fuzzes TOMP with max_next_ts taken over every
    acknowledgement (004 section 3.2.2.3 takes it over those reporting min_next_mid), shrinks
    the failure, and the trace it writes is rejected by the checker."""
    banner("10. fuzz TOMP with max_next_ts over all acknowledgements (Hypothesis)")
    code, text = run(["fuzz", "--protocol", "tomp", "--variant", "raise-all", "--n", "3",
                      "--messages", "4",
                      "--seed", str(seed), "--out", str(out / "fuzz-tomp")])
    print(text, end="")
    ok = code == 1
    trace = next((out / "fuzz-tomp").glob("*.run.jsonl"), None)
    if trace is None:
        return False
    from tomkit.traces.reader import read_records

    seqs: dict[str, list[str]] = {}
    for r in read_records(trace):
        if r["kind"] == "deliver":
            seqs.setdefault(r["process"], []).append(r["msg"])
    print("the shrunk run's deliveries:")
    for p, msgs in sorted(seqs.items()):
        print(f"  {p}: {' '.join(msgs)}")
    code, text = run(["check", str(trace), "-q"])
    print("\n".join(ln for ln in text.splitlines() if "VIOLATED" in ln or ln.startswith(
        ("    p", "verdict"))))
    return ok and code == 1


def tlc(out: Path) -> bool:
    """TLC on the ABCAST spec and on its broken variant."""
    banner("11. TLC: ABCAST (004) and a variant that delivers before the timestamp is final")
    text = tlc_demo(out / "tlc")
    print(text)
    return "violated" in text.lower() or "not found" in text.lower()


def spark(out: Path, seed: int) -> bool:
    """A small data set (some traces faulty) generated and scanned with Spark."""
    banner("12. generate a data set and scan it with Spark (local)")
    text = spark_demo(str(out / "spark"), seed)
    print(text)
    return "violated" in text


def hybrid(out: Path, seed: int) -> bool:
    """001's hybrid switching roles as the load moves (Figure 5 in short), against its
    two baselines on the same inputs, with the latency plot."""
    banner("13. the hybrid token-site/symmetric protocol (001) switching roles")
    from tomkit.runs.hybrid import run_demo

    res = run_demo(out / "hybrid", seed)
    print("Figure 3's two LANs (A B C | D E, 20 ms inside, 520 ms across); each scenario "
          "8 s, loads of A..E high (H) or low (L); A* active, B>A passive with sequencer A")
    print(f"  {'scenario':<9} {'loads':<6} {'hybrid roles, settled':<22} "
          f"{'token-site':>10} {'symmetric':>10} {'hybrid':>8}   (ms, second half)")
    ok = True
    for sc in res["scenarios"]:
        lat = sc["latency_ms"]
        print(f"  {sc['scenario']:<9} {sc['loads']:<6} {sc['hybrid_roles']:<22} "
              f"{lat['token-site']:>10.0f} {lat['symmetric']:>10.0f} {lat['hybrid']:>8.0f}")
        if sc is not res["scenarios"][0]:  # the first is the start-up, every process active
            ok &= lat["hybrid"] <= 1.05 * min(lat["token-site"], lat["symmetric"])
    print(f"latency over time, with the transient after each change: {res['png']}")
    return ok and Path(res["png"]).exists()


def qos(out: Path, seed: int) -> bool:
    """003's QoS-preserving protocol: a run with a crash, a join and a leave, its trace
    judged against the paper's guarantees (no agreement: a crashed sender's message may
    reach some processes only), and latency against n beside ABCAST's."""
    banner("14. the QoS-preserving protocol (003): a crash, a join, a leave")
    from tomkit.runs.qos import run_demo

    res = run_demo(str(out / "qos"), seed)
    print(res["text"].rstrip("\n"))
    st = res["stats"]
    code, text = run(["check", res["trace"], "-q", "--guarantee", "qos", "--realtime-bound",
                      f"{st['bound_failures']:.6f}", "--slot", "0.1", "--rate-max",
                      str(int(st["reserved_max"]))])
    at = text.index("trace ")
    print(text[at:text.index("\n\n", at)])
    # the profile table: qos judged; atomic broadcast's agreement is not promised by 003
    print("\n".join(ln for ln in text.splitlines()
                    if ln.lstrip().startswith(("qos ", "atomic-broadcast "))))
    return res["ok"] and code == 0 and Path(res["png"]).exists()


def maelstrom(out: Path, seed: int) -> bool:
    """Two Maelstrom node programs under ``tomkit run -w total-order-broadcast`` with
    partitions: the fixed-leader majority log stays valid; gossip without ordering breaks
    prefix order, and its witness is drawn."""
    banner("15. Maelstrom nodes under tomkit run: a correct and a broken total order")
    nodes = Path(__file__).resolve().parent / "maelstrom" / "nodes"
    common = ["-w", "total-order-broadcast", "--node-count", "3", "--time-limit", "3",
              "--rate", "30", "--latency", "5", "--latency-dist", "exponential",
              "--nemesis", "partition", "--nemesis-interval", "1", "--timeout", "1",
              "--seed", str(seed)]
    ok = True
    for name, want in (("tob_leader", 0), ("tob_gossip", 1)):
        folder = out / "maelstrom" / name
        code, text = run(["run", "--bin", sys.executable, str(nodes / f"{name}.py"),
                          *common, "--concurrency", "2n", "--out", str(folder)])
        print(text, end="")
        print(f"(exit {code}, expected {want})")
        ok &= code == want
    gossip = out / "maelstrom" / "tob_gossip"
    code, text = run(["check", str(gossip / "trace.jsonl"), "-q", "-p", "prefix-order",
                      "--draw", str(gossip / "pictures")])
    print(tail(text, 4), end="")
    drawn = sorted((gossip / "pictures").glob("*.svg"))
    print(f"witness drawn: {', '.join(str(d) for d in drawn)}")
    return ok and code == 1 and bool(drawn)


def prove_demo(out_dir: Path) -> str:
    """Prove ToTo for n = 4 (every delta), refute S-ToTo without internal stability at
    n = 6, delta = 3, and draw its counterexample. Returns a short report naming the
    files."""
    from tomkit.fuzz.counterexample import counterexample_files, explain
    from tomkit.fuzz.prove.delivery.prove import allowed_deltas, prove_rule, stem
    from tomkit.model.toto.mutants import resolve_rule

    lines = ["tomkit prove (Z3, one activation, K = 3 messages per processor):"]
    rule = resolve_rule("toto")
    for d in allowed_deltas(rule, 4):
        lines.append("  " + prove_rule("toto", rule, 4, d).line("toto"))
    bad = resolve_rule("s-toto-no-internal")
    o = prove_rule("s-toto-no-internal", bad, 6, 3, props=("agreement",))
    lines.append("  " + o.line("s-toto-no-internal"))
    if o.counterexample is not None:
        files = counterexample_files(o.counterexample, out_dir,
                                     stem("s-toto-no-internal", o), bad)
        lines.append(f"  counterexample picture: {files['svg']}")
        lines.append(f"  trace on which 'tomkit check' fails: {files['trace']}")
        lines += ["    " + x for x in explain(o.counterexample, bad).splitlines()]
    return "\n".join(lines)


def tlc_demo(out_dir: Path) -> str:
    """Check ABCAST (no error) and its broken variant ABCAST_EarlyDelivery (a
    counterexample, written as a trace in ``out_dir`` and confirmed by the trace
    checker). Returns printable text."""
    from tomkit.fuzz.tlc.outputs import counterexample_outputs, default_paths, write_log
    from tomkit.fuzz.tlc.report import render
    from tomkit.fuzz.tlc.runner import TlcError, TlcSetupError, run_tlc

    specs = Path(__file__).resolve().parent.parent / "specs"
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    try:
        good = run_tlc(specs / "ABCAST/ABCAST.tla", workers=2)
        parts.append(render(good))
        bad = run_tlc(specs / "ABCAST/ABCAST_EarlyDelivery.tla", workers=2)
        log, trace = default_paths(out_dir, bad.config)
        outputs = counterexample_outputs(bad, trace)
        outputs.log_path = write_log(bad, log)
        parts.append(render(bad, outputs, diff=True))
    except (TlcSetupError, TlcError) as e:
        parts.append(f"TLC part skipped: {e}")
    return "\n\n".join(parts)


def spark_demo(out_dir: str, seed: int = 1) -> str:
    """Generate a few thousand traces (some faulty) and scan them with Spark in local
    mode; returns the printable aggregate report."""
    import os

    from tomkit.checker.spark.job import scan
    from tomkit.checker.spark.session import get_session
    from tomkit.model.dataset import PROTOCOLS, generate

    data = os.path.join(out_dir, "dataset")
    generate(data, list(PROTOCOLS), 2000, faulty=0.05, seed=seed, progress=False)
    spark = get_session("local[*]")
    result = scan(spark, data, os.path.join(out_dir, "scan"))
    return result.text


if __name__ == "__main__":
    sys.exit(main())
