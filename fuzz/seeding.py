"""What a seeded Hypothesis search may depend on: its seed, its settings and the code
under test, and nothing else the process happens to hold.

Hypothesis (as installed here, 6.170) draws, with probability 1/20 per integer, float,
string or bytes choice, a "constant" from two pools: a fixed global one, and the
literals of every local module (neither the standard library nor site-packages, nor a
test file) present in ``sys.modules`` at that moment (``hypothesis.internal.conjecture.providers``,
``_get_local_constants``). The second pool grows with whatever the process has imported,
so the same seed gave different searches in a fresh process, after pytest had collected
the whole suite, or after one more module of tomkit was imported; an edit of any tomkit
module that adds a literal changed them too. Every stateful run draws one such integer
(the swarm probability of its rules, in [0, 254]; Hypothesis's ``FeatureFlags``), and
tomkit's modules hold literals in that range (100, 117, 120, 125, ...), so the runs of
a seed changed with the imports: in the full suite the hybrid fuzzer met literal-ot's
other breach at run 24 instead of its total-order breach at run 3, and seed 2 missed
qos's early-join-ok in 400 runs.

:func:`seed_alone` empties the local pool for the length of a search (the global pool
stays: Hypothesis's own boundary values, the same in every process). Hypothesis offers
no setting for this, so it replaces a private function of one module, and says so
plainly (RuntimeError) if a Hypothesis release moves it; ``tests/fuzz/test_fuzz_seeding.py``
fails if a seeded search starts to depend on the process again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis.internal.conjecture import providers

__all__ = ["seed_alone"]

#: how many seed_alone blocks are open (they nest: a search inside a search's block)
_depth = 0


def _no_local_constants() -> providers.Constants:
    return providers.Constants()


@contextmanager
def seed_alone() -> Iterator[None]:
    """Within the block, Hypothesis draws no constant from the modules the process has
    imported (module docstring): a search from a seed makes the same runs whatever
    ran, or was imported, before it."""
    global _depth
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if not callable(getattr(providers, "_get_local_constants", None)) or \
            cache is None or not hasattr(cache, "cache"):
        from hypothesis import __version__

        raise RuntimeError(
            f"hypothesis {__version__}: providers._get_local_constants or CONSTANTS_CACHE "
            "is gone, so a seeded search cannot be kept from the process's imported "
            "modules (fuzz/seeding.py); pin hypothesis to a release that has them")
    if _depth:
        _depth += 1
        try:
            yield
        finally:
            _depth -= 1
        return
    before = providers._get_local_constants
    providers._get_local_constants = _no_local_constants
    # the constants each choice's range admits are cached across searches, local ones
    # with them: drop them on the way in and on the way out
    cache.cache.clear()
    _depth = 1
    try:
        yield
    finally:
        _depth = 0
        providers._get_local_constants = before
        cache.cache.clear()
