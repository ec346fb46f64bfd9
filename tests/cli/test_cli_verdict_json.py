"""One JSON shape for every command that reports a verdict (tomkit/cli/verdict_json.py,
docs/cli.md): ``tomkit``, ``format_version`` and ``verdict`` first, the command's own
fields after; the text lines on stderr, so stdout is the JSON alone. The API's
``to_dict()`` says ``verdict`` too, with the old keys (``conforms``, ``status``) beside
it for one release."""

from __future__ import annotations

import json

import pytest
from cli_run import run

import tomkit
from tomkit.fuzz.prove.base import Prover
from tomkit.fuzz.prove.provers import register, unregister
from tomkit.model.process import Option
from tomkit.traces.schema import FORMAT_VERSION

COMMON = ["tomkit", "format_version", "verdict"]


def parsed(out: str) -> dict:
    doc = json.loads(out)  # stdout holds the JSON alone
    assert list(doc)[:3] == COMMON
    assert doc["tomkit"] == tomkit.__version__ and doc["format_version"] == FORMAT_VERSION
    return doc


def test_prove_json_holds_each_outcome_and_the_worst_verdict(capsys):
    code, out, err = run(capsys, "prove", "--protocol", "qos", "--n", "2", "--format",
                         "json")
    doc = parsed(out)
    assert code == 0 and doc["verdict"] == "proved" and doc["prover"] == "qos-bound"
    assert [(o["verdict"], o["status"], o["crashes"]) for o in doc["outcomes"]] == \
        [("proved", "proved", 0), ("proved", "proved", 1)]
    assert "qos n=2 crashes<=0" in err  # the text lines, on stderr


class _Found:
    def __init__(self, verdict: str):
        self.verdict = verdict

    def to_dict(self) -> dict:
        return {"verdict": self.verdict}


def _fake_run(protocol, rule, opts, say, report):
    say("fake: two outcomes")
    report(_Found("unknown"))
    report(_Found("counterexample"))
    return 1


@pytest.fixture
def fake_prover():
    register(Prover("fake", "a prover for the test", ("fake-protocol",),
                    (Option("n", int, 4, "processes"),), _fake_run))
    try:
        yield
    finally:
        unregister("fake")


def test_prove_json_verdict_is_the_worst_outcome(capsys, fake_prover):
    from tomkit.cli.prove import VERDICTS

    code, out, _ = run(capsys, "prove", "--protocol", "fake-protocol", "--format", "json")
    doc = parsed(out)
    assert code == 1 and doc["verdict"] == VERDICTS[1] == "counterexample"
    assert [o["verdict"] for o in doc["outcomes"]] == ["unknown", "counterexample"]


def test_prove_text_is_unchanged(capsys):
    code, out, err = run(capsys, "prove", "--protocol", "qos", "--n", "2")
    assert code == 0 and out.startswith("qos n=2 crashes<=0: latency <= ") and err == ""


def test_conform_json_says_verdict_and_keeps_conforms(capsys, tmp_path):
    trace = tmp_path / "run.jsonl"
    assert run(capsys, "simulate", "--protocol", "toto", "--n", "3", "--messages", "4",
               "--out", trace)[0] == 0
    code, out, _ = run(capsys, "conform", trace, "--protocol", "toto", "--format", "json")
    doc = parsed(out)
    assert code == 0 and doc["verdict"] == "conforms" and doc["conforms"] is True
    api = tomkit.conform(str(trace), "toto")
    assert api.verdict == api.to_dict()["verdict"] == "conforms"


def test_fuzz_json_no_failure_and_failure(capsys, tmp_path):
    code, out, err = run(capsys, "fuzz", "toto", "--examples", "3", "--format", "json",
                         "--out", tmp_path / "a")
    doc = parsed(out)
    assert code == 0 and doc["verdict"] == "no failure" and doc["failure"] is None
    assert (doc["rule"], doc["examples"], doc["seed"]) == ("toto", 3, 1)
    assert err.startswith("seed 1\n")
    code, out, _ = run(capsys, "fuzz", "majority", "--n", "4", "--examples", "30",
                       "--no-shrink", "--format", "json", "--out", tmp_path / "b")
    doc = parsed(out)
    assert code == 1 and doc["verdict"] == "failure"
    assert doc["failure"]["kind"] == "liveness"
    assert json.loads((tmp_path / "b").joinpath(
        doc["failure"]["files"]["trace"].split("/")[-1]).read_text().splitlines()[1])


def test_check_json_has_the_same_first_keys(capsys, tmp_path):
    trace = tmp_path / "run.jsonl"
    run(capsys, "simulate", "--n", "3", "--messages", "3", "--out", trace)
    code, out, _ = run(capsys, "check", trace, "--format", "json")
    assert code == 0 and parsed(out)["verdict"] == "holds"


def test_the_api_outcome_says_verdict():
    o = tomkit.prove("toto", n=3, delta=2)
    d = o.to_dict()
    assert o.verdict == d["verdict"] == d["status"] == "proved"
    assert all(q["verdict"] == q["status"] for q in d["queries"].values())


def test_prove_json_names_the_files_written_for_a_counterexample(capsys, tmp_path):
    out = tmp_path / "cx"
    code, stdout, _ = run(capsys, "prove", "--protocol", "abcast", "--n", "2", "--variant",
                          "deliver-ud", "--out", out, "--format", "json")
    doc = parsed(stdout)
    (o,) = doc["outcomes"]
    assert code == 1 and doc["verdict"] == o["verdict"] == "counterexample"
    assert o["search"]["violation"]["explanation"].startswith("p")
    # the outcome is reported once its files are written (it had none before)
    assert sorted(o["files"]) == ["trace", "txt"]
    assert all((out / p.split("/")[-1]).exists() for p in o["files"].values())
