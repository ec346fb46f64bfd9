"""bench/scan_small.py runs end to end on a tiny data set: the default scan and the SQL
engine's, each a ``tomkit scan`` process, with wall and CPU seconds (the JVM's counted)
and the ratio; with ``--before`` (here this environment's own ``tomkit``) the SQL engine
also runs as "the code before", with the ratio now / before (here a stand-in for another
checkout's ``tomkit``, which runs that scan on the files engine: the bench's rows and
ratios, without a second JVM). Run as a process of its own: the bench makes itself the
subreaper of what it starts, and waits for any child."""

from __future__ import annotations

import subprocess
import sys

import pytest
from locations import ROOT

from tomkit.traces.generate import FAULTS, clean_trace, faulty_trace
from tomkit.traces.writer import write_records

pytestmark = pytest.mark.spark

pytest.importorskip("pyspark")


def test_scan_small_smoke(tmp_path):
    d = tmp_path / "data" / "protocol=p" / "config=c"
    d.mkdir(parents=True)
    recs = clean_trace("c0", n_processes=3, n_messages=4, seed=1, recv=False)
    recs += faulty_trace("f0", next(iter(FAULTS)), seed=2, n_processes=3, n_messages=4,
                         recv=False)[0]
    write_records(d / "part-0.parquet", recs, grouped=True)
    before = tmp_path / "tomkit-before"
    before.write_text(f"#!{sys.executable}\n"
                      "import sys\nfrom tomkit.cli import main\n"
                      "sys.argv = ['tomkit', *(a for a in sys.argv[1:] if a not in "
                      "('--engine', 'sql'))]\nraise SystemExit(main())\n")
    before.chmod(0o755)
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "scan_small.py"), "--rounds",
                        "1", "--data", str(tmp_path / "data"), "--engines", "files,sql",
                        "--before", str(before)],
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = {ln.split()[1]: ln.split() for ln in p.stdout.splitlines()
            if ln.split()[:1] == ["0"]}
    assert set(rows) == {"files", "sql", "sql@before"}, p.stdout
    # the JVM's CPU is counted: the SQL engine's process tree takes more than the default's
    assert float(rows["sql"][3]) > float(rows["files"][3]) > 0, p.stdout
    assert "sql / files:" in p.stdout and "sql / sql@before:" in p.stdout, p.stdout
    # the stand-in scans without a JVM: the ratio now / before reads the JVM's cost
    assert float(rows["sql"][3]) > float(rows["sql@before"][3]) > 0, p.stdout
