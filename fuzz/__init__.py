"""Proving and fuzzing the models.

* Hypothesis stateful machines: :mod:`.dag_machine` (a delivery rule on DAG views
  revealed in adversarial orders) and :mod:`.process_machine` (protocol processes on a
  hostile network, the trace checkers as invariants), run by :mod:`.stateful`; a
  process machine's failing run is reduced step by step by :mod:`.reduce`;
* Z3 proofs (:mod:`.prove`) and exhaustive enumeration of one activation;
* the TLC runner for ``specs/`` (:mod:`.tlc`);
* :mod:`.counterexample`: a failure as a trace that ``tomkit check`` rejects, a picture
  and an explanation.
"""
