"""Keeping pandas out of a process that never hands pyarrow a pandas object.

pyarrow imports pandas, when it is installed, the first time it converts Python or numpy
values (``pa.array``, ``pa.scalar``, a compute function given a Python number), only to
ask whether the input is a pandas object; its C++ converter asks again at every
conversion until the import succeeds. That import is a third of a second of CPU, the
largest part of a short ``tomkit check`` (docs/check-speed.md). :func:`refuse` makes the
import fail fast instead, for the rest of the process; code that does use pandas takes it
through :func:`pandas`, which lifts the refusal for good. pyarrow's own explicit pandas
uses (``to_pandas()``) stay as they are: they need pandas lifted first, which nothing in
tomkit's check path does without :func:`pandas`.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

__all__ = ["lift", "pandas", "refuse", "refused"]


class _Refuse:
    """An import finder that refuses pandas."""

    def find_spec(self, name: str, path=None, target=None):  # noqa: ANN001 - importlib's
        if name.split(".")[0] == "pandas":
            raise ImportError("pandas is refused in this process (tomkit.checker."
                              "pandas_guard): take it through pandas_guard.pandas()")
        return None


_REFUSE = _Refuse()


def refuse() -> None:
    """Refuse pandas from now on, unless it is already imported."""
    if "pandas" not in sys.modules and _REFUSE not in sys.meta_path:
        sys.meta_path.insert(0, _REFUSE)


def refused() -> bool:
    return _REFUSE in sys.meta_path


def lift() -> None:
    """Let pandas be imported again (before handing work to code that uses it: Spark)."""
    if _REFUSE in sys.meta_path:
        sys.meta_path.remove(_REFUSE)


def pandas() -> ModuleType:
    """The pandas module, the refusal lifted first."""
    lift()
    return importlib.import_module("pandas")
