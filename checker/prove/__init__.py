"""Symbolic proofs of ToTo-family delivery rules with Z3 (issue 4; see docs/prove.md).

* :mod:`~tomkit.checker.prove.symbolic`: the rule vocabulary interpreted on Z3 terms
  (:class:`~tomkit.checker.prove.symbolic.Z3RuleView`), so the rule bodies of
  ``model/rules.py`` are proved as they are, with no hand-written Z3 copy;
* :mod:`~tomkit.checker.prove.encoding`: one activation's final DAG with up to K
  messages per processor, causally closed views of it, and Crash(q) events;
* :mod:`~tomkit.checker.prove.solve`: the queries (agreement, stability, internal and
  external stability), returning plain-data witnesses.

This package does not import ``tomkit.model``: a rule is passed in as a function of one
view, ``rule_fn(v)``, and the caller binds its parameters.
"""
