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


# ---- settings of the wrong type or outside their choices --------------------------------

@pytest.mark.parametrize("kw, error, said", [
    ({"method": "smt"}, ValueError, "unknown method 'smt'; known: auto, z3, enumeration"),
    ({"encoding": "fact"}, ValueError, "did you mean 'facts'?"),
    ({"solver": "cardinal"}, ValueError, "unknown solver 'cardinal'"),
    ({"props": ["agrement"]}, ValueError, "unknown property 'agrement'"),
    ({"props": "agreement"}, TypeError, "props must be a list of property names"),
    ({"k": 0}, ValueError, "k must be at least 1"),
    ({"k": 2.0}, TypeError, "k must be int, got float 2.0"),
    ({"crashes": "no"}, TypeError, "crashes must be bool, got str 'no'"),
])
def test_prove_refuses_a_setting_before_any_query(kw, error, said):
    # method="smt" ran the enumeration for a minute under the name smt
    with pytest.raises(error) as ei:
        tomkit.prove("toto", n=3, delta=2, **kw)
    assert said in str(ei.value)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("edges") / "t.jsonl"
    tomkit.write(path, [{"trace": "t", "process": "p", "kind": "send", "msg": "a"},
                        {"trace": "t", "process": "p", "kind": "deliver", "msg": "a"}])
    return path


@pytest.mark.parametrize("key", ["liveness", "keep_going", "merge", "progress", "stream"])
def test_check_refuses_a_string_where_a_switch_is_wanted(trace, key):
    # liveness="no" switched liveness on (a non-empty string is true)
    with pytest.raises(TypeError, match=f"{key} must be bool, got str 'no'"):
        tomkit.check(trace, **{key: "no"})


def test_simulate_names_a_misspelt_setting_with_the_closest():
    # it was taken for an option of the protocol: "toto does not take mesages (it takes
    # --delta, ...)", in the command's words
    with pytest.raises(TypeError) as ei:
        tomkit.simulate("toto", n=3, mesages=5)
    said = str(ei.value)
    assert said.startswith("simulate() takes no setting 'mesages' for toto")
    assert said.endswith("did you mean 'messages'?")


def test_simulate_refuses_a_run_beyond_memory_as_the_command_does():
    # it ran until the kernel's OOM killer ended the process
    with pytest.raises(ValueError, match=r"^n = 3, messages = 1000000000000000: the "
                       "simulator keeps its whole trace in memory"):
        tomkit.simulate("toto", n=3, messages=10**15)


def test_simulate_takes_crashes_as_text_as_its_docstring_says():
    run = tomkit.simulate("toto", n=3, messages=5, seed=1, crashes="p1@0.01")
    assert [r["process"] for r in run.records if r["kind"] == "crash"] == ["p1"]


def test_write_makes_the_folder_as_the_commands_do(tmp_path, trace):
    from tomkit.traces.reader import read_records

    path = tmp_path / "new" / "dir" / "t.jsonl"
    tomkit.write(path, read_records(trace))  # FileNotFoundError, [Errno 2] before
    assert read_records(path) == read_records(trace)
    with pytest.raises(ValueError, match="cannot make the folder"):
        tomkit.write(trace / "x.jsonl", read_records(trace))
