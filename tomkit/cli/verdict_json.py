"""The one shape of ``--format json`` for every command that reports a verdict (``check``,
``watch``, ``conform``, ``prove``, ``fuzz``, ``tlc``, ``run``): one JSON object whose
first keys are the same everywhere, then the command's own fields (docs/cli.md, "One
JSON shape").

- ``tomkit``: the version that wrote it; ``format_version``: the trace format's;
- ``verdict``: the outcome in the command's own word (``holds``/``violated`` for a
  check, ``conforms``/``differs``, ``proved``/``counterexample``/``unknown``,
  ``no failure``/``failure``, ...), the word its text form ends with (the exit code
  says the same: 0, 1, 3; 2 is bad input, which writes no JSON).

``check``'s and ``watch``'s report (``checker/report.py``) carries the same keys.
Before, the outcome was ``conforms`` (conform), ``status`` (prove, tlc) or ``valid``
(run): those keys stay beside ``verdict`` for one release (docs/api.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tomkit.traces.schema import report_stamp

__all__ = ["document", "dumps"]


def document(verdict: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The command's JSON: the common keys, then ``body`` (whose own ``verdict``, if
    any, is the same word)."""
    return {**report_stamp(), "verdict": verdict,
            **{k: v for k, v in body.items() if k not in ("tomkit", "format_version",
                                                            "verdict")}}


def dumps(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=1)
