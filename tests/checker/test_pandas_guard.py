"""checker/pandas_guard.py: pyarrow's pandas probe refused, pandas still there for code
that asks for it. Each case runs in a fresh process (the refusal is process-wide)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("pandas")


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_refused_pandas_is_not_imported_by_pyarrow_conversions():
    out = run("import sys\n"
              "from tomkit.checker.pandas_guard import refuse, refused\n"
              "refuse()\n"
              "import numpy as np, pyarrow as pa, pyarrow.compute as pc\n"
              "a = pa.array([1, 2, None]); b = pa.array(np.arange(3))\n"
              "assert pc.less(b, 2).to_pylist() == [True, True, False]\n"
              "assert a.to_numpy(zero_copy_only=False).tolist()[:2] == [1.0, 2.0]\n"
              "try:\n    import pandas\nexcept ImportError:\n    print('refused')\n"
              "print(refused(), 'pandas' in sys.modules)\n")
    assert out.splitlines() == ["refused", "True False"]


def test_pandas_lifts_the_refusal_for_good():
    out = run("import sys\n"
              "from tomkit.checker.pandas_guard import pandas, refuse, refused\n"
              "refuse()\n"
              "pd = pandas()\n"
              "import pyarrow as pa\n"
              "t = pa.table({'a': [1, 2]}).to_pandas()\n"
              "print(refused(), type(t).__name__, pa.array(pd.Series([3])).to_pylist())\n")
    assert out == "False DataFrame [3]"


def test_refuse_leaves_an_imported_pandas_alone():
    out = run("import pandas\n"
              "from tomkit.checker.pandas_guard import refuse, refused\n"
              "refuse()\n"
              "print(refused())\n")
    assert out == "False"
