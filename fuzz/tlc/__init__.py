"""TLC on the TLA+ specifications of ``specs/``: the runner (:mod:`.runner`), TLC's value
syntax (:mod:`.values`), counterexamples as v1 traces (:mod:`.trace`), and what
``tomkit tlc`` prints (:mod:`.report`). See docs/tlc.md."""
