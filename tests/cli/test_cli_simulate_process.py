"""The ``tomkit simulate`` process refuses pyarrow's probe for pandas (a third of a second
at start-up), unless the run loads the user's code, and writes the same trace either way;
a program calling main() keeps its own settings."""

from __future__ import annotations

import os
import subprocess
import sys

from tomkit.checker.pandas_guard import refused
from tomkit.cli import main

#: the command as its own process: main() with no arguments reads sys.argv
COMMAND = """
import sys
from tomkit.cli import main
sys.argv = ["tomkit", *sys.argv[1:]]
code = main()
print("PANDAS", "pandas" in sys.modules)
sys.exit(code)
"""

ARGS = ["simulate", "--protocol", "toto", "--n", "5", "--delta", "3", "--messages", "200",
        "--seed", "4"]


def _command(args: list[str], cwd: str, extra_path: str | None = None) -> str:
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [extra_path,
                                                          env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", COMMAND, *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_no_pandas_and_the_same_trace(tmp_path):
    for suffix in (".jsonl", ".parquet"):
        out = _command(ARGS + ["--out", str(tmp_path / f"a{suffix}")], str(tmp_path))
        assert "PANDAS False" in out
        assert main(ARGS + ["--out", str(tmp_path / f"b{suffix}")]) == 0
        assert (tmp_path / f"a{suffix}").read_bytes() == (tmp_path / f"b{suffix}").read_bytes()


def test_a_user_rule_may_use_pandas(tmp_path):
    (tmp_path / "pandas_rule.py").write_text(
        "import pandas\n"
        "from tomkit.model.toto.rules import toto\n\n"
        "def rule(v, params):\n"
        "    return toto(v, params)\n")
    out = _command(ARGS + ["--rule", "pandas_rule:rule", "--out", str(tmp_path / "r.jsonl")],
                   str(tmp_path), str(tmp_path))
    assert "PANDAS True" in out


def test_main_called_by_a_program_keeps_its_settings(tmp_path):
    was = refused()
    assert main(ARGS + ["--out", str(tmp_path / "c.jsonl")]) == 0
    assert refused() == was
