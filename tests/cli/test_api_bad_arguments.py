"""The Python API (tomkit/__init__.py) with wrong, empty and odd arguments: each is
refused with one message naming the argument and what it takes, as the command line
refuses it, never an error from deep inside (issue 30 part 7)."""

from __future__ import annotations

import pytest

import tomkit
from tomkit.checker.check_run import UsageError
from tomkit.traces.errors import TraceFormatError

GOOD = [{"trace": "t", "process": "p", "kind": "send", "msg": "a"},
        {"trace": "t", "process": "p", "kind": "deliver", "msg": "a"}]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("api") / "t.jsonl"
    tomkit.write(path, GOOD)
    return str(path)


def test_check_takes_paths_one_by_one_or_as_a_list(trace):
    assert tomkit.check(trace).to_dict() == tomkit.check([trace]).to_dict()


def test_check_takes_one_property_name_as_a_string(trace):
    report = tomkit.check(trace, properties="integrity")
    assert [p for p in report.to_dict()["properties"]] == ["integrity"]


@pytest.mark.parametrize(("args", "kwargs", "error", "said"), [
    ((), {}, ValueError, "give at least one trace file or folder"),
    ((5,), {}, TypeError, "paths must be file or folder names (str or os.PathLike), got int"),
    ((None,), {}, TypeError, "got NoneType None"),
    (("T",), {"properties": [1]}, TypeError, "properties must be names (str), got int 1"),
    (("T",), {"properties": [""]}, UsageError, "names no property"),
    (("T",), {"latency_bound": "3"}, TypeError,
     "latency_bound must be a number of seconds, got str '3'"),
    (("T",), {"latency_bound": -3}, UsageError, "latency_bound must be positive, got -3"),
    (("T",), {"latency_bound": float("nan")}, UsageError, "latency_bound must be positive"),
    (("T",), {"slot": "1"}, TypeError, "slot must be a number of seconds"),
    (("T",), {"rate_max": 1.5}, TypeError, "rate_max must be an int, got float 1.5"),
    (("T",), {"rate_max": True}, TypeError, "rate_max must be an int, got bool True"),
    (("T",), {"rate_max": -1}, UsageError, "rate_max must be >= 0, got -1"),
])
def test_check_refuses_bad_arguments_by_name(trace, args, kwargs, error, said):
    args = tuple(trace if a == "T" else a for a in args)
    with pytest.raises(error) as ei:
        tomkit.check(*args, **kwargs)
    assert said in str(ei.value)


def test_check_makes_no_report_when_an_output_folder_cannot_be_made(trace, tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError, match="html .*: cannot make the folder"):
        tomkit.check(trace, html=tmp_path / "f" / "r.html")


@pytest.mark.parametrize(("kwargs", "said"), [
    ({"protocol": 3}, "protocol must be str, got int 3"),
    ({"n": "4"}, "n must be int, got str '4'"),
    ({"n": 4.0}, "n must be int, got float 4.0"),
    ({"messages": 5.5}, "messages must be int, got float 5.5"),
    ({"messages": "5"}, "messages must be int, got str '5'"),
    ({"seed": "x"}, "seed must be int, got str 'x'"),
    ({"rate": "fast"}, "rate must be a number, got str 'fast'"),
    ({"delay": "gamma"}, "delay must be Delay (e.g. Delay('gamma', 0.001)"),
    ({"delta": "2"}, "toto: delta must be int, got str '2'"),
    ({"crashes": ["p1"]}, "crashes must be (process, time) pairs"),
])
def test_simulate_refuses_a_setting_of_the_wrong_type(kwargs, said):
    settings = {"protocol": "toto", "n": 4, "messages": 5, **kwargs}
    with pytest.raises(TypeError) as ei:
        tomkit.simulate(**settings)
    assert said in str(ei.value)


def test_simulate_still_takes_an_int_for_a_float_and_a_protocol_option():
    run = tomkit.simulate("toto", n=4, messages=5, rate=100, delta=2, seed=3)
    assert run.stats["deliveries"] == 20


def test_simulate_refuses_a_negative_jitter():
    with pytest.raises(ValueError, match="jitter must be finite and >= 0, got -1"):
        tomkit.simulate("toto", n=3, messages=5, jitter=-1)


@pytest.mark.parametrize(("records", "error", "said"), [
    ([], ValueError, "no records to replay"),
    (5, TypeError, "records must be trace records (dicts) or a file name, got int"),
    ({"trace": "t"}, TypeError, "got dict: one record? put it in a list"),
    ([{"x": 1}], TraceFormatError, "records: row 0: field 'trace': missing required field"),
    ([GOOD[0], {**GOOD[1], "kind": "bogus"}], TraceFormatError, "records: row 1: field 'kind'"),
])
def test_conform_refuses_records_that_are_not_records(records, error, said):
    with pytest.raises(error) as ei:
        tomkit.conform(records, "tomp")
    assert said in str(ei.value)


def test_conform_names_an_unknown_protocol_even_without_records():
    with pytest.raises(ValueError, match="unknown protocol 'nosuch'; known: "):
        tomkit.conform([], "nosuch")


@pytest.mark.parametrize(("args", "kwargs", "error", "said"), [
    ((3,), {"n": 3}, TypeError, "rule must be str, got int 3"),
    (("toto",), {"n": "3"}, TypeError, "n must be int, got str '3'"),
    (("toto",), {"n": 1}, ValueError, "n must be at least 2 processors, got 1"),
    (("toto",), {"n": 3}, ValueError, "toto needs a delta: for n = 3 one of 2"),
    (("toto",), {"n": 3, "delta": 7}, ValueError,
     "toto does not accept delta = 7 with n = 3 (it accepts 2)"),
    (("toto",), {"n": 3, "delta": "2"}, TypeError, "delta must be int, got str '2'"),
    (("toto",), {"n": 3, "delta": 2, "colour": 1}, TypeError,
     "prove() takes no setting colour (it takes k, props"),
])
def test_prove_refuses_bad_arguments_by_name(args, kwargs, error, said):
    with pytest.raises(error) as ei:
        tomkit.prove(*args, **kwargs)
    assert said in str(ei.value)


@pytest.mark.parametrize(("records", "error", "said"), [
    ([], ValueError, "no records to write"),
    ("abc", TypeError, "records must be an iterable of records (dicts), got str"),
    (GOOD[0], TypeError, "got dict: one record? put it in a list"),
    (7, TypeError, "got int"),
])
def test_write_refuses_what_is_not_a_list_of_records(tmp_path, records, error, said):
    path = tmp_path / "w.jsonl"
    with pytest.raises(error) as ei:
        tomkit.write(path, records)
    assert said in str(ei.value)
    assert not path.exists()
