"""``tomkit.check()`` takes every option of ``tomkit check`` (the QoS properties'
member-liveness, realtime-latency and rate of Bar-Joseph, Keidar, Anker and Lynch among
them) and decides as the command does: the same verdicts, the same refusals."""

from __future__ import annotations

import argparse
import inspect
import json
import re

import pytest
from tracedsl import parse

import tomkit
from tomkit.checker.check_run import UsageError
from tomkit.cli import check as check_cli
from tomkit.cli import main

#: command-line flags that are no setting of a run: how it prints (the API returns the
#: report: to_dict() is --format json), listing the profiles, the progress bar's switch
NOT_SETTINGS = {"files": "paths", "format": None, "list_guarantees": None,
                "quiet": "progress", "property": "properties"}

# 003's tight failure case in miniature: q delivers a 170 ms of real time after its send
# (bound 160 ms without failures); p sends 3 packets in slot 0 and 3 more in slot 1
QOS = """
    p send a time=0.00 real_time=0.00 x_slot=0
    p deliver a time=0.10 real_time=0.10
    q deliver a time=0.16 real_time=0.17
    p packet time=0.01 x_slot=0
    p packet time=0.02 x_slot=0
    p packet time=0.03 x_slot=0
    p packet time=0.11 x_slot=1
    p packet time=0.12 x_slot=1
    p packet time=0.13 x_slot=1
"""


def qos_records():
    recs = parse(QOS)
    for r in recs:
        if "real_time" in r:
            r["real_time"] = float(r["real_time"])
        if "x_slot" in r:
            r["x_slot"] = int(r["x_slot"])
    return recs


@pytest.fixture
def qos(tmp_path):
    path = tmp_path / "qos.jsonl"
    tomkit.write(path, qos_records())
    return path


def test_every_check_flag_is_a_keyword_of_the_api():
    ap = argparse.ArgumentParser()
    check_cli.add_parser(ap.add_subparsers())
    sub = ap._subparsers._group_actions[0].choices["check"]
    dests = {a.dest for a in sub._actions if a.dest not in ("help", "func")}
    keywords = set(inspect.signature(tomkit.check).parameters)
    for dest in dests:
        name = NOT_SETTINGS.get(dest, dest)
        assert name is None or name in keywords, f"--{dest.replace('_', '-')} has no keyword"
    assert {"realtime_bound", "slot", "rate_max", "rate_avg", "rate_window",
            "guarantee_file", "draw", "html", "plot_latency"} <= keywords


def verdicts(report):
    return {t["trace"]: t["verdicts"] for t in report.to_dict()["traces"]}


@pytest.mark.parametrize("kw,argv", [
    (dict(realtime_bound=0.16), ["--realtime-bound", "0.16"]),
    (dict(realtime_bound=0.17), ["--realtime-bound", "0.17"]),
    (dict(properties=["realtime-latency"], latency_bound=0.16),
     ["-p", "realtime-latency", "--latency-bound", "0.16"]),
    (dict(rate_max=3), ["--rate-max", "3"]),
    (dict(rate_max=2), ["--rate-max", "2"]),
    (dict(rate_max=3, rate_avg=5, rate_window=2),
     ["--rate-max", "3", "--rate-avg", "5", "--rate-window", "2"]),
    (dict(properties=["rate"], slot=0.1, rate_avg=6, rate_window=2),
     ["-p", "rate", "--slot", "0.1", "--rate-avg", "6", "--rate-window", "2"]),
    (dict(properties=["member-liveness"]), ["-p", "member-liveness"]),
    (dict(guarantee="qos", realtime_bound=0.17, rate_max=3),
     ["--guarantee", "qos", "--realtime-bound", "0.17", "--rate-max", "3"]),
])
def test_the_qos_options_decide_as_the_command_does(qos, capsys, kw, argv):
    report = tomkit.check(qos, **kw)
    code = main(["check", str(qos), "-q", "--format", "json", *argv])
    doc = json.loads(capsys.readouterr().out)
    assert verdicts(report) == {t["trace"]: t["verdicts"] for t in doc["traces"]}
    assert report.exit_code() == code


def test_the_qos_verdicts_themselves(qos):
    got = verdicts(tomkit.check(qos, properties=["member-liveness"], realtime_bound=0.16,
                                rate_max=3, rate_avg=5, rate_window=2))["t"]
    assert got == {"member-liveness": "holds", "realtime-latency": "violated",
                   "rate": "violated"}
    got = verdicts(tomkit.check(qos, realtime_bound=0.17, rate_max=3, rate_avg=6,
                                rate_window=2))["t"]
    assert got["realtime-latency"] == got["rate"] == "holds"


@pytest.mark.parametrize("kw,message", [
    (dict(rate_avg=4), "rate_avg needs rate_window K (slots)"),
    (dict(rate_max=1, slot=0.0), "slot must be positive"),
    (dict(rate_avg=4, rate_window=0), "rate_window must be positive"),
    (dict(realtime_bound=-1.0), "realtime_bound must be positive"),
    (dict(guarantee="qos", properties=["rate"]), "properties and scope do not mix"),
    (dict(guarantee="qos", guarantee_file="x.toml"), "give guarantee or guarantee_file"),
])
def test_bad_settings_are_refused_naming_the_keyword(qos, kw, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        tomkit.check(qos, **kw)


def test_the_command_names_the_same_refusals_by_flag(qos, capsys):
    assert main(["check", str(qos), "--rate-avg", "4"]) == 2
    assert "tomkit check: --rate-avg needs --rate-window K (slots)" in capsys.readouterr().err
    assert main(["check", str(qos), "--slot", "0", "--rate-max", "1"]) == 2
    assert "--slot must be positive" in capsys.readouterr().err


def test_a_realtime_bound_on_traces_without_real_time_is_refused(tmp_path, capsys):
    path = tmp_path / "local.jsonl"
    tomkit.write(path, [{k: v for k, v in r.items() if k != "real_time"}
                        for r in qos_records()])
    with pytest.raises(ValueError, match="no trace in .* logs real_time .*latency_bound "
                       "checks the local clocks"):
        tomkit.check(path, realtime_bound=0.16)
    assert main(["check", str(path), "-q", "--realtime-bound", "0.16"]) == 2
    assert "--latency-bound checks the local clocks" in capsys.readouterr().err
    # the local clocks: 160 ms, within a bound of 0.16 s
    assert verdicts(tomkit.check(path, latency_bound=0.16))["t"]["latency"] == "holds"


def test_a_profile_file_and_the_outputs(qos, tmp_path):
    prof = tmp_path / "mine.toml"
    prof.write_text('name = "my-qos"\ntitle = "003 without the rate"\nsource = "test"\n'
                    'properties = ["integrity", "member-liveness", "realtime-latency"]\n')
    pics, page, png = tmp_path / "pics", tmp_path / "r.html", tmp_path / "lat.png"
    report = tomkit.check(qos, guarantee_file=prof, realtime_bound=0.16, draw=pics,
                          html=page, plot_latency=png)
    assert report.guarantee == "my-qos" and report.exit_code() == 1
    assert [r.verdict for r in report.profiles if r.profile.name == "my-qos"] == ["violated"]
    assert sorted(p.name for p in pics.iterdir()) == ["t--realtime-latency.svg"]
    assert "<svg" in (pics / "t--realtime-latency.svg").read_text()
    assert "realtime-latency" in page.read_text()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="mine2.toml"):
        bad = tmp_path / "mine2.toml"
        bad.write_text('name = "x"\n')
        tomkit.check(qos, guarantee_file=bad)
