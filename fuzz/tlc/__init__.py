"""TLC on TLA+ specifications, tomkit's (``specs/``) or a user's: the runner (:mod:`.runner`),
configs fitted to TLC 2.15 (:mod:`.config`), TLC's value syntax (:mod:`.values`), trace maps
(:mod:`.tracemap`) evaluated by replaying a counterexample (:mod:`.replay`), counterexamples
as v1 traces (:mod:`.trace`), the files of a run (:mod:`.outputs`) and what ``tomkit tlc``
prints (:mod:`.report`). See docs/tlc.md."""
