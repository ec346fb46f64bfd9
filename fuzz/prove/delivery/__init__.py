"""Proofs with Z3 of the ToTo-family delivery rules (see docs/prove.md).

* :mod:`~tomkit.fuzz.prove.delivery.symbolic`: the rule vocabulary interpreted on Z3
  terms (:class:`~tomkit.fuzz.prove.delivery.symbolic.Z3RuleView`), so the rule bodies of
  ``model/toto/rules.py`` are proved as they are, with no hand-written Z3 copy;
* :mod:`~tomkit.fuzz.prove.delivery.encoding`: one activation's final DAG with up to K
  messages per processor, causally closed views of it, and Crash(q) events;
* :mod:`~tomkit.fuzz.prove.delivery.facts`: the same activation as per-processor facts
  (voter visible, which voters the voter and the latest message follow), which proves;
* :mod:`~tomkit.fuzz.prove.delivery.symmetry`: renaming processors (violation pinned on
  processor 0, the others sorted) for rules that read no rank, split queries and
  rank-respecting reductions for those that do;
* :mod:`~tomkit.fuzz.prove.delivery.solve`: the queries (agreement, stability, internal
  and external stability), returning plain-data witnesses;
* :mod:`~tomkit.fuzz.prove.delivery.minimal`: the smallest counterexample;
* :mod:`~tomkit.fuzz.prove.delivery.enumerate`: exhaustive enumeration for small n;
* :mod:`~tomkit.fuzz.prove.delivery.prove`: every (n, delta), by Z3 or by enumeration.

The encodings do not import ``tomkit.model``: a rule is passed in as a function of one
view, ``rule_fn(v)``, and the caller binds its parameters.
"""

#: the safety queries on one activation (solve.py decides them with Z3, enumerate.py by
#: running the rule on every view); 002 section 2's stability conditions and agreement
QUERIES = ("agreement", "stability", "internal-stability", "external-stability")
