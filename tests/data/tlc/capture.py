"""Re-capture the TLC -tool output samples beside this file from real runs.

Run from the repository root: ``.venv/bin/python tests/data/tlc/capture.py``.
Each sample is TLC's raw stdout; tests/fuzz/tlc/test_tlc.py parses them without Java.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from tomkit.fuzz.tlc.runner import find_jar, find_java, tlc_command

HERE = Path(__file__).resolve().parent
SPECS = HERE.parents[2] / "specs"

CASES = {
    # name: (spec, config, extra keyword arguments for tlc_command)
    "ok": (SPECS / "TotalOrderBroadcast/MCTotalOrderBroadcast.tla",
           SPECS / "TotalOrderBroadcast/TotalOrderBroadcast.cfg", {}),
    "invariant": (SPECS / "ABCAST/ABCAST_EarlyDelivery.tla",
                  SPECS / "ABCAST/ABCAST_EarlyDelivery.cfg", {}),
    "simulate": (SPECS / "ABCAST/ABCAST_EarlyDelivery.tla",
                 SPECS / "ABCAST/ABCAST_EarlyDelivery.cfg",
                 {"simulate": True, "seed": 7, "depth": 40}),
    "temporal": (SPECS / "ABCAST/NoFairness.tla", HERE / "specs/NoFairness.cfg", {}),
    "syntax_error": (HERE / "specs/SyntaxError.tla", HERE / "specs/SyntaxError.cfg", {}),
    "semantic_error": (HERE / "specs/Unknown.tla", HERE / "specs/Unknown.cfg", {}),
    "config_error": (SPECS / "TotalOrderBroadcast/TotalOrderBroadcast.tla",
                     HERE / "specs/BadConfig.cfg", {}),
}


def capture(name: str) -> str:
    spec, cfg, kw = CASES[name]
    temp_spec = None
    if name == "temporal":  # NoFairness EXTENDS ABCAST: run it from specs/ABCAST
        temp_spec = spec
        spec.write_text((HERE / "specs/NoFairness.tla").read_text())
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = tlc_command(find_java(), find_jar(), spec, cfg, Path(tmp) / "states",
                              Path(tmp), workers=1, **kw)
            out = subprocess.run(cmd, cwd=spec.parent, capture_output=True, text=True)
            text = out.stdout.replace(tmp, "/tmp/TLCTMP")
    finally:
        if temp_spec is not None:
            temp_spec.unlink()
    (HERE / f"{name}.out").write_text(text)
    return text


if __name__ == "__main__":
    for n in sys.argv[1:] or CASES:
        print(n, len(capture(n)))
