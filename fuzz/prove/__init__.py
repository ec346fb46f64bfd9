"""Proofs with Z3: the ToTo-family delivery rules (see docs/prove.md).

* :mod:`~tomkit.fuzz.prove.symbolic`: the rule vocabulary interpreted on Z3 terms
  (:class:`~tomkit.fuzz.prove.symbolic.Z3RuleView`), so the rule bodies of
  ``model/rules.py`` are proved as they are, with no hand-written Z3 copy;
* :mod:`~tomkit.fuzz.prove.encoding`: one activation's final DAG with up to K
  messages per processor, causally closed views of it, and Crash(q) events;
* :mod:`~tomkit.fuzz.prove.facts`: the same activation as per-processor facts (voter
  visible, which voters the voter and the latest message follow), which proves;
* :mod:`~tomkit.fuzz.prove.symmetry`: renaming processors (violation pinned on
  processor 0, the others sorted) for rules that read no rank, split queries and
  rank-respecting reductions for those that do;
* :mod:`~tomkit.fuzz.prove.solve`: the queries (agreement, stability, internal and
  external stability), returning plain-data witnesses.

ABCAST and TOMP (004, Dasser), proved by induction over the state of n hosts:

* :mod:`~tomkit.fuzz.prove.timestamps`: the symbolic state and the transitions;
* :mod:`~tomkit.fuzz.prove.ts_invariant`: the invariant and the safety property;
* :mod:`~tomkit.fuzz.prove.ts_solve`: base case, inductive step per transition, safety;
* :mod:`~tomkit.fuzz.prove.ts_bmc`: bounded model checking from the initial state, to
  refute a broken variant with a reachable run;
* :mod:`~tomkit.fuzz.prove.ts_replay`: that run replayed on the model, as a trace.

The encodings do not import ``tomkit.model``: a rule is passed in as a function of one
view, ``rule_fn(v)``, and the caller binds its parameters; the protocols are encoded
from 004 and checked against ``model/abcast.py`` and ``model/tomp.py`` by the replays
(``rules.py``, ``ts_replay.py``).
"""

#: the safety queries on one activation (solve.py decides them with Z3, enumerate.py by
#: running the rule on every view); 002 section 2's stability conditions and agreement
QUERIES = ("agreement", "stability", "internal-stability", "external-stability")
