"""The Python API's rough edges of issue 30 part 7, round 7: what the command refuses, the
API refuses in the same words, with the same way round it."""

from __future__ import annotations

import pytest

import tomkit


def test_prove_refuses_an_n_never_measured_to_finish_as_the_command_does():
    with pytest.raises(ValueError) as ei:
        tomkit.prove("toto", n=11, delta=6)
    said = str(ei.value)
    assert said.startswith("n = 11: the delivery prover was measured to finish up to "
                           "n = 10 (")
    assert "no_size_limit=True" in said and "timeout=SECONDS" in said


def test_prove_no_size_limit_lets_a_large_n_through_to_the_rules_own_checks():
    # past the size check: the refusal of the delta shows it was reached (no Z3 run)
    with pytest.raises(ValueError, match="does not accept delta = 99 with n = 11"):
        tomkit.prove("toto", n=11, delta=99, no_size_limit=True)


def test_prove_no_size_limit_must_be_a_bool():
    with pytest.raises(TypeError, match="no_size_limit must be bool, got str 'yes'"):
        tomkit.prove("toto", n=3, delta=2, no_size_limit="yes")
