"""`tomkit simulate`'s membership schedule, one flag per event of ``model/events.py``
(``--crash``, ``--recover``, ``--join``, ``--leave``, ``--partition``, ``--heal``), for
toto-dynamic's membership service (000 section 5, Dolev, Kramer and Malki) and qos's
processes alike; errors name the flag and the bad value; the old spellings still run."""

from __future__ import annotations

import json

import pytest

import tomkit
from tomkit.cli import main
from tomkit.model.net.links import Delay

DYN = ["simulate", "--protocol", "toto-dynamic", "--n", "6", "--messages", "200", "--rate",
       "200", "--mean-delay", "0.003", "--detection-delay", "0.02"]


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def records(path):
    return [json.loads(x) for x in path.read_text().splitlines()[1:]]


def test_joins_partition_and_heal_reach_the_membership_service(capsys, tmp_path):
    out = tmp_path / "dyn.jsonl"
    code, text, err = run(capsys, *DYN, "--crash", "p1@0.03", "--crash", "p4@0.09",
                          "--join", "p5@0.05", "--recover", "p1@0.15",
                          "--partition", "0.07:p0,p2,p3", "--heal", "0.13", "--seed", "1",
                          "--out", str(out))
    assert code == 0, err
    assert "seed 1" in text and "4 configurations" in text
    recs = records(out)
    # p5 joins outside the first view; p1 restarts; the partition cuts p4 and p5 off
    # (a crash each) and the heal brings p5 back: new incarnations
    assert {r["process"] for r in recs if r["kind"] == "join"} == {"p5", "p1~2", "p4~2",
                                                                    "p5~2"}
    assert {r["process"] for r in recs if r["kind"] == "crash"} == {"p1", "p4", "p5"}
    first = [r for r in recs if r["kind"] == "view" and r["process"] == "p0"][0]
    assert "p5" not in first["members"]
    # the same run as the Python API's keywords give, one per event
    api = tomkit.simulate("toto-dynamic", n=6, messages=200, rate=200.0,
                          delay=Delay("exponential", 0.003), detection_delay=0.02, seed=1,
                          crashes=[("p1", 0.03), ("p4", 0.09)], joins=[("p5", 0.05)],
                          recovers=[("p1", 0.15)],
                          partitions=[(0.07, [["p0", "p2", "p3"]])], heals=[0.13])
    assert recs == api.records
    # and the old spellings (a join of a crashed process, a partition into no groups,
    # --joins), with a warning each
    with pytest.warns(FutureWarning) as seen:
        old = tomkit.simulate("toto-dynamic", n=6, messages=200, rate=200.0,
                              delay=Delay("exponential", 0.003), detection_delay=0.02,
                              seed=1, crashes=[("p1", 0.03), ("p4", 0.09)],
                              joins=[("p5", 0.05), ("p1", 0.15)],
                              partitions=[(0.07, [["p0", "p2", "p3"]]), (0.13, [])])
    assert {str(w.message).split(" is deprecated")[0] for w in seen} == {
        "a join of a crashed process (p1 at 0.15)", "a partition into no groups"}
    assert old.records == recs
    with pytest.warns(FutureWarning):
        code, _, err = run(capsys, *DYN, "--crash", "p1@0.03", "--crash", "p4@0.09",
                           "--joins", "p5@0.05,p1@0.15", "--partition", "0.07:p0,p2,p3",
                           "--heal", "0.13", "--seed", "1", "--out", str(tmp_path / "o.jsonl"))
    assert code == 0 and "--joins is deprecated: --join P@TIME" in err
    assert records(tmp_path / "o.jsonl") == recs
    assert main(["check", str(out), "-q", "--guarantee", "model-toto-dynamic"]) == 0
    assert main(["check", str(out), "-q", "-p", "member-liveness"]) == 0


def test_the_order_of_partition_and_heal_flags_does_not_matter(capsys, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run(capsys, *DYN, "--partition", "0.08:p0,p1,p2,p3", "--heal", "0.16",
               "--out", str(a))[0] == 0
    assert run(capsys, *DYN, "--heal", "0.16", "--partition", "0.08:p0,p1,p2,p3",
               "--out", str(b))[0] == 0
    assert records(a) == records(b)
    assert {r["process"] for r in records(a) if r["kind"] == "join"} == {"p4~2", "p5~2"}


@pytest.mark.parametrize("argv,message", [
    (["--join", "p9@0.1"], "--join: unknown process 'p9' (processes are p0 .. p5)"),
    (["--partition", "0.1:p0,p7"], "--partition: unknown process 'p7'"),
    (["--join", "p1@0.1,p1@0.2"], "joins: p1 joins twice"),
    (["--recover", "p1@0.1"], "p1 recovers at 0.1 without a crash before"),
])
def test_bad_membership_values_are_named(capsys, tmp_path, argv, message):
    code, _, err = run(capsys, *DYN, *argv, "--out", str(tmp_path / "x.jsonl"))
    assert code == 2 and message in err
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("flag", ["--crash", "--recover", "--join", "--leave", "--joins"])
def test_a_malformed_process_event_is_a_usage_error_naming_it(capsys, tmp_path, flag):
    with pytest.raises(SystemExit) as e:
        main([*DYN, flag, "p1@soon", "--out", str(tmp_path / "x.jsonl")])
    assert e.value.code == 2
    assert (f"argument {flag}: expected PROCESS@TIME[,PROCESS@TIME...] (e.g. p3@0.5), "
            "got 'p1@soon'") in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["0.1", "x:p0,p1", "0.1:p0,,p1", "-1:p0"])
def test_a_malformed_partition_is_a_usage_error_naming_it(capsys, tmp_path, bad):
    with pytest.raises(SystemExit) as e:
        main([*DYN, f"--partition={bad}", "--out", str(tmp_path / "x.jsonl")])
    assert e.value.code == 2
    assert "argument --partition: expected TIME:P,P[/P,P...]" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*DYN, "--heal", "later", "--out", str(tmp_path / "x.jsonl")])
    assert "argument --heal: expected a TIME >= 0 in seconds, got 'later'" in \
        capsys.readouterr().err


def test_a_protocol_refuses_an_event_it_cannot_honour_in_one_line(capsys, tmp_path):
    out = str(tmp_path / "x.jsonl")
    code, _, err = run(capsys, "simulate", "--protocol", "toto", "--n", "4", "--messages",
                       "10", "--join", "p1@0.1", "--out", out)
    assert code == 2 and err == ("tomkit simulate: toto cannot honour join (the membership "
                                 "events it honours: crash)\n")
    code, _, err = run(capsys, "simulate", "--protocol", "qos", "--n", "4", "--messages",
                       "10", "--partition", "0.1:p0,p1", "--out", out)
    assert code == 2 and err == ("tomkit simulate: qos cannot honour partition (the "
                                 "membership events it honours: crash, recover, join, "
                                 "leave, renegotiate)\n")
    # the replayer refuses a recorded event the same way
    dyn = tmp_path / "dyn.jsonl"
    assert run(capsys, *DYN, "--messages", "40", "--join", "p5@0.02", "--out", str(dyn))[0] == 0
    code, _, err = run(capsys, "conform", "--protocol", "toto", str(dyn))
    assert code == 2 and err == ("tomkit conform: trace sim: toto cannot honour join at "
                                 "record 0 of p5 (the membership events it honours: "
                                 "crash)\n")
    # fuzz and conform take no schedule
    with pytest.raises(SystemExit):
        main(["fuzz", "--protocol", "toto-dynamic", "--join", "p1@0.1"])
    assert "tomkit fuzz: no option --join (" in capsys.readouterr().err


def test_qos_joins_leaves_and_recovers_on_the_same_flags(capsys, tmp_path):
    out = tmp_path / "q.jsonl"
    code, _, err = run(capsys, "simulate", "--protocol", "qos", "--n", "4", "--messages",
                       "40", "--rate", "20", "--join", "p3@0.2", "--seed", "2",
                       "--out", str(out))
    assert code == 0, err
    joins = [r for r in records(out) if r["kind"] == "join"]
    assert [r["process"] for r in joins] == ["p3"] and "real_time" in joins[0]
    # tomkit.simulate("qos", joins=...) failed before the one vocabulary
    api = tomkit.simulate("qos", n=4, messages=40, rate=20.0, seed=2, joins=[("p3", 0.2)],
                          delay=Delay("exponential", 0.001))
    assert api.records == records(out)


def test_help_gives_each_event_its_meaning(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--partition TIME:P,P[/P,P...]" in text and "--heal TIME" in text
    for flag in ("--crash", "--recover", "--join", "--leave"):
        assert f"{flag} P@TIME" in text
    assert "--joins P@T,P@T deprecated: --join" in text
