"""The one simulator's speed against the code before it, measured in the same run.

Issue 12 asks that driving every protocol through one process interface and one simulator
keeps the measured speed: ToTo with n = 8 at least 60 k application deliveries per
CPU-second, ABCAST and TOMP no slower than before. Machines here are noisy, so the
baseline is measured in the same run: the tree of ``--baseline REV`` (default: the last
commit before the common interface) is exported to a temporary folder and its own
simulators (``model/sim.py`` for the ToTo family, ``model/acksim.py`` for ABCAST and
TOMP) run in a subprocess, alternating with the current code, best of ``--repeat`` runs
each. The figure is application deliveries per CPU-second of the ``simulate`` call
(``time.process_time``), Poisson sources at 100 messages per second in all, 001's LAN
delays (shifted gamma, 1 ms), 4000 messages.

    python bench/sim_speed.py [--n 8] [--messages 4000] [--repeat 3] [--baseline REV]

A ``--baseline`` after the common interface (a tree without ``model/acksim.py``) runs
through today's API: that compares the one simulator with an earlier version of itself.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the last commit with the two simulators (model/sim.py and model/acksim.py)
BEFORE = "ba3e93b"
PROTOCOLS = ("toto", "all-ack", "abcast", "tomp")

#: one timed run, in a fresh interpreter: the new API, or the old one (``old`` = 1)
RUN = r"""
import json, sys, time
protocol, n, messages, old = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
kw = dict(n=n, source="poisson", rate=100.0 / n, messages=messages, seed=1)
if sys.argv[5] == "1":  # ABCAST/TOMP without the records the replayer needs, as before
    kw["options"] = {"control_records": False}
if old:
    from tomkit.model.sim import Delay
    if protocol in ("abcast", "tomp"):
        from tomkit.model.acksim import AckSimConfig as Config, simulate_ack as simulate
    else:
        from tomkit.model.sim import SimConfig as Config, simulate
else:
    from tomkit.model.net.links import Delay
    from tomkit.model.sim import SimConfig as Config, simulate
cfg = Config(protocol=protocol, delay=Delay("gamma", 0.001), **kw)
t0 = time.process_time()
stats = simulate(cfg).stats
cpu = time.process_time() - t0
print(json.dumps({"deliveries": stats["deliveries"], "cpu": cpu}))
"""


def export(rev: str, into: Path) -> Path:
    """``rev``'s tree, importable as ``tomkit`` (the folders mapped as pyproject.toml's
    package-dir does); returns the folder to put on PYTHONPATH."""
    src = into / "src"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    pkg = into / "pkg"
    shutil.copytree(src / "tomkit", pkg / "tomkit")
    for part in ("traces", "checker", "model", "fuzz"):
        os.symlink(src / part, pkg / "tomkit" / part)
    return pkg


def timed(protocol: str, n: int, messages: int, path: Path | None, bare: bool = False) -> float:
    """Deliveries per CPU-second of one run; ``path``: the old tree's PYTHONPATH;
    ``bare``: the current ABCAST/TOMP without control records."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    # a baseline after the common interface (no model/acksim.py) runs through today's API
    old_api = path is not None and (path / "tomkit" / "model" / "acksim.py").exists()
    out = subprocess.run([sys.executable, "-c", RUN, protocol, str(n), str(messages),
                          "1" if old_api else "0", "1" if bare else "0"],
                         env=env, check=True,
                         capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return r["deliveries"] / r["cpu"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--messages", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", default=BEFORE, metavar="REV")
    ap.add_argument("--protocols", default=",".join(PROTOCOLS))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        old_path = export(args.baseline, Path(tmp))
        print(f"n = {args.n}, {args.messages} messages, Poisson 100/s in all, LAN gamma 1 ms; "
              f"best of {args.repeat}; baseline {args.baseline}")
        print(f"{'protocol':<28} {'before':>9} {'now':>9} {'now/before':>11}   "
              "(application deliveries per CPU-second)")
        rows = [(p, False) for p in args.protocols.split(",")]
        # The replayer needs ABCAST's and TOMP's acknowledgements and final timestamps as
        # recv records (issue 12 part 4): twice the records of the old simulator. The
        # like-for-like row writes the old simulator's records only.
        rows += [(p, True) for p, _ in rows if p in ("abcast", "tomp")]
        for p, bare in rows:
            best_old = best_new = 0.0
            for _ in range(args.repeat):
                best_old = max(best_old, timed(p, args.n, args.messages, old_path))
                best_new = max(best_new, timed(p, args.n, args.messages, None, bare))
            label = f"{p} (no control records)" if bare else p
            print(f"{label:<28} {best_old:>9,.0f} {best_new:>9,.0f} "
                  f"{best_new / best_old:>11.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
