"""TLC's quick-start JVM (``run_tlc(quick_start=True)``, fuzz/tlc/runner.py's QUICK_JVM):
the options reach the java command only when asked for, and a model checked with them
gives what the default JVM gives, the same counterexample included."""

from __future__ import annotations

from pathlib import Path

import pytest
from locations import ROOT

from tomkit.fuzz.tlc.runner import QUICK_JVM, run_tlc, tlc_command

SPECS = ROOT / "specs"


def command(quick: bool) -> list[str]:
    p = Path("/x")
    return tlc_command("java", p / "tla2tools.jar", p / "M.tla", p / "M.cfg", p / "meta",
                       p / "tmp", quick_start=quick)


def test_the_quick_options_only_when_asked_for():
    quick, default = command(True), command(False)
    assert quick[1:1 + len(QUICK_JVM)] == QUICK_JVM
    assert "-XX:+UseParallelGC" not in quick
    assert default[1] == "-XX:+UseParallelGC"
    assert not set(QUICK_JVM) & set(default)
    # the rest of the command is the same
    assert quick[1 + len(QUICK_JVM):] == default[2:]


@pytest.mark.tlc
def test_a_model_checked_quickly_gives_the_same_result():
    """A broken variant on one TLC worker: with either JVM the same states and the same
    shortest counterexample."""
    spec, cfg = SPECS / "QoS" / "QoSContract_Unshaped.tla", \
        SPECS / "QoS" / "QoSContract_Unshaped.cfg"
    quick = run_tlc(spec, cfg, workers=1, quick_start=True)
    default = run_tlc(spec, cfg, workers=1)
    assert set(QUICK_JVM) <= set(quick.command) and not set(QUICK_JVM) & set(default.command)
    assert quick.status == default.status == "violation"
    assert quick.violated == default.violated
    assert (quick.states_generated, quick.distinct_states) == \
        (default.states_generated, default.distinct_states)
    assert [s.values for s in quick.behaviour] == [s.values for s in default.behaviour]
