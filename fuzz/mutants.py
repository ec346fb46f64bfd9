"""Broken variants of the ToTo-family rules, written in the rule vocabulary, that
``tomkit prove`` must refute (issue 4). Each drops one condition the papers' correctness
arguments rely on:

``toto-low-delta``
    ToTo_delta (000 section 4.2) with delta < n/2, below the range 000 allows: two
    disjoint sets of delta + 1 voters can make two different messages win.
``s-toto-no-internal``
    S-ToTo (002 section 3) without rule 1a, internal stability: a candidate that is not
    a source yet may still become one.
``s-toto-low-delta``
    S-ToTo (002 section 3) with delta < n/2. (ToTo itself with delta < n/2 is
    ``toto-low-delta``; ``tomkit prove`` finds it safe for one activation: its clause
    NTail(s) >= n - delta leaves at most delta processors unseen, see docs/prove.md.)
``g-toto-no-ntail``
    G-ToTo (002 section 4) without "Ntail(G) > n - delta" in rule 1b: an unseen
    message may still gather more than delta votes.
``majority``
    deliver whatever a majority voted for, once anything has a majority.

``MUTANTS`` maps these names to the rules; ``tomkit prove`` and ``tomkit fuzz`` accept them
as RULE. The rules live in ``model/mutants.py`` (the data set generator simulates some of
them too); this module names them for the proving and fuzzing side.
"""

from __future__ import annotations

from tomkit.model.mutants import RULE_MUTANTS as MUTANTS
from tomkit.model.mutants import (
    g_toto_no_ntail,
    majority,
    s_toto_low_delta,
    s_toto_no_internal,
    toto_low_delta,
)

__all__ = ["MUTANTS", "g_toto_no_ntail", "majority", "s_toto_low_delta", "s_toto_no_internal",
           "toto_low_delta"]
