"""fuzz/seeding.py: a seeded search makes the same runs whatever the process ran or
imported before it. Hypothesis draws some choices from the literals of the local
modules in ``sys.modules``; in the full suite (every test module collected, more of
tomkit imported by earlier tests) that pool differed from a lone test's, and three
seeded fuzz tests found other breaches, later, or not at all."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers
from hypothesis.stateful import RuleBasedStateMachine, rule

from tomkit.fuzz.process_machine import process_machine
from tomkit.fuzz.seeding import seed_alone
from tomkit.fuzz.stateful import fuzz_protocol, run_machine

#: probe modules made so far in this process (each holds literals none before held:
#: Hypothesis's pool only grows, so a literal seen once would change nothing again)
_made: list[str] = []


def probe_module(values: list) -> str:
    """The source of a local module (outside site-packages and the standard library, not
    a test file) that holds ``values`` as literals."""
    return "VALUES = [\n" + "".join(f"    {v!r},\n" for v in values) + "]\n"


@pytest.fixture
def more_local_constants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Imports a new local module holding the literals given (and, besides, literals no
    earlier probe held), as an earlier test importing more of tomkit does: they join
    Hypothesis's pool of local constants."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def load(values: list) -> None:
        k = len(_made)
        name = f"seeding_probe_{k}"
        fresh = [700_000 + 1000 * k + i for i in range(40)] + \
            [0.5 + k / 1000 + i / 10**6 for i in range(40)] + [f"probe{k}-{i}" for i in range(40)]
        (tmp_path / f"{name}.py").write_text(probe_module(list(values) + fresh))
        _made.append(name)
        importlib.import_module(name)

    yield load
    for name in _made:
        sys.modules.pop(name, None)


def literal_ot_search() -> tuple:
    """A search the hybrid fuzz tests make (literal-ot, seed 1, 25 runs): what it found,
    at which run, and the steps of the failing run."""
    failure = fuzz_protocol("hybrid", 4, {"roles": "0", "switches": 1, "tick_rate": 0,
                                          "variant": "literal-ot"}, 25, 1,
                            max_messages=10, shrink=False)
    assert failure is not None
    f = failure.found
    return f.kind, f.found_at, tuple(f.schedule), len(f.records)


class Draws(RuleBasedStateMachine):
    """A machine that only draws what Hypothesis may take from its pools of constants
    (wide integers, floats, short strings) and logs it: a search of it shows at once any
    choice that depends on more than the seed."""

    log: list[tuple] = []

    @rule(x=st.integers(0, 10**6), y=st.floats(0, 1), s=st.text(max_size=8))
    def draw(self, x: int, y: float, s: str) -> None:
        type(self).log.append((x, y, s))


def draws(seed_: int) -> list[tuple]:
    Draws.log = []
    assert run_machine(Draws, 40, seed_, shrink=False, steps=10) is None
    return Draws.log


def test_hypothesis_reads_the_imported_modules_and_seed_alone_hides_them(
        more_local_constants) -> None:
    """The test of the test: without the pin, the probe module's literals reach the
    pool Hypothesis draws from (so the test below would see them); within
    seed_alone, the pool is empty, and Hypothesis's own function is back after it."""
    more_local_constants(list(range(100, 255)))
    assert set(range(100, 255)) <= set(providers._get_local_constants().integers)
    own = providers._get_local_constants
    with seed_alone():
        assert not providers._get_local_constants()
        with seed_alone():  # nested, as a search inside a search's block
            assert not providers._get_local_constants()
        assert not providers._get_local_constants()
    assert providers._get_local_constants is own
    with pytest.raises(KeyError), seed_alone():
        raise KeyError("a search that fails")
    assert providers._get_local_constants is own


def test_a_seeded_search_ignores_what_ran_and_was_imported_before(
        more_local_constants) -> None:
    """The same search twice in one process, with another protocol's search and the
    import of a module of new literals in between: the same draws, and the hybrid
    fuzzer's search (one of those that changed in the full suite) finds the same
    failure at the same run, step for step."""
    first, drawn = literal_ot_search(), draws(7)
    # other work in the same process: another seeded search (the qos machine, its own
    # rules and draws), then a module whose literals Hypothesis would pick up
    assert fuzz_protocol("qos", 3, {"slot": 100.0, "max_delay": 50.0, "epsilon": 40.0},
                         10, 3, 6, shrink=False) is None
    more_local_constants(list(range(100, 255)))
    again = draws(7)
    assert len(again) == len(drawn) and again == drawn
    assert literal_ot_search() == first


def test_each_search_of_a_machine_starts_afresh() -> None:
    """A machine searched again from the same seed makes the same runs: the first
    search leaves nothing in Hypothesis (no example database, no cached draws) that
    steers the second."""
    m = process_machine("hybrid", 3, {"roles": "0", "switches": 1,
                                      "variant": "literal-view"}, max_messages=3)
    a = run_machine(m, 10, 1, shrink=False, steps=12)
    b = run_machine(m, 10, 1, shrink=False, steps=12)
    assert a is not None and b is not None
    assert a.found.schedule == b.found.schedule and a.found.records == b.found.records
