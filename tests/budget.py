"""The suite's Hypothesis budgets, and how to spend more of them.

`make test` runs each property-based test on a small budget and derandomized (the
profile ``suite``, loaded by conftest.py): the same examples every run, so that a failure
reproduces from the log alone and a slow CI machine never meets an example nobody has
run before. The budgets written in the tests are the suite's; `make test-deep` sets
``TOMKIT_TEST_DEPTH`` (10 there) which multiplies every budget given through
:func:`examples` and draws fresh examples each run (the profile ``deep``): the search to
run before a release or after changing a checker, at about ten times the cost.
"""

from __future__ import annotations

import os

#: how many times the written budgets a run spends (1: `make test`)
DEPTH = float(os.environ.get("TOMKIT_TEST_DEPTH", "1") or 1)
#: the Hypothesis profile conftest.py loads
PROFILE = "deep" if DEPTH > 1 else "suite"


def examples(n: int) -> int:
    """A test's ``max_examples``: its budget in the suite, ``n``, times the depth."""
    return max(1, round(n * DEPTH))


#: the seeds of the tests that plant each fault in generated runs: one in the suite (the
#: planted fault is the point; other modules vary the run), the depth's number when deeper
SEEDS = range(max(1, round(DEPTH)))
