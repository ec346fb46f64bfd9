"""ABCAST and TOMP in the one simulator (model/sim.py) and ``tomkit simulate``: runs are
deterministic given their seed; ABCAST and TOMP on one seed see the same inputs and deliver
the same sequence, TOMP never later; every run passes the checkers of tomkit.checker
(integrity, total order weak and strong, FIFO, causal order, liveness) on a written
file; TOMP's raised timestamps are lower bounds of the final ones (004 section 3.2.3.2);
planted faults, and 004's literal counter rule, are caught by the total-order checker;
the CLI writes a checkable trace."""

from __future__ import annotations

import argparse
import math
from collections import defaultdict

import pytest

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.cli import simulate as simulate_cli
from tomkit.model.abcast.abcast import Timestamp
from tomkit.model.abcast.tomp import TompProcess
from tomkit.model.net.links import Delay
from tomkit.model.sim import SimConfig, SimResult, simulate

PROTOCOLS = ("abcast", "tomp")

ALL = ["integrity", "total-order-weak", "total-order-strong", "fifo-order", "causal-order",
       "liveness"]
LAN = Delay("gamma", 0.001)


def sim(protocol: str = "tomp", variant: str | None = None, **kw) -> SimResult:
    return simulate(SimConfig(protocol=protocol, options={"variant": variant}, **kw))


def verdicts(records: list[dict], names: list[str] = ALL) -> dict[str, Verdict]:
    trace = Trace.from_records(records)
    return {n: properties()[n].check(trace, Options()).verdict for n in names}


def deliveries(records: list[dict]) -> dict[tuple[str, str], dict]:
    return {(r["process"], r["msg"]): r for r in records if r["kind"] == "deliver"}


def sequences(records: list[dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for r in records:
        if r["kind"] == "deliver":
            out[r["process"]].append(r["msg"])
    return dict(out)


def test_deterministic_given_seed() -> None:
    cfg = dict(protocol="tomp", n=4, rate=400, messages=150, delay=LAN, seed=5)
    a, b = sim(**cfg), sim(**cfg)
    assert a.records == b.records
    c = sim(protocol="tomp", n=4, rate=400, messages=150, delay=LAN, seed=6)
    assert c.records != a.records


@pytest.mark.parametrize("source", ["poisson", "periodic", "quasi-periodic"])
def test_same_inputs_same_order_tomp_never_later(source: str) -> None:
    """On one seed both protocols send and receive every data message at the same times
    and decide at the same times (t1 equal), deliver the same sequence at every process,
    and TOMP delivers each message no later than ABCAST (model/abcast/tomp.py)."""
    runs = {p: sim(protocol=p, n=5, rate=300, messages=400,
                            delay=Delay("exponential", 0.001), source=source, seed=2)
            for p in PROTOCOLS}
    ab, tp = runs["abcast"].records, runs["tomp"].records

    def inputs(records: list[dict]) -> list[dict]:
        # deps differ: they name the sender's last delivery, which TOMP may make earlier;
        # TOMP's acknowledgements and decisions carry more than ABCAST's
        return [{k: v for k, v in r.items() if k != "deps" and k[:2] != "x_"}
                for r in records if r["kind"] != "deliver"]

    assert inputs(ab) == inputs(tp)
    assert sequences(ab) == sequences(tp)
    da, dt = deliveries(ab), deliveries(tp)
    assert da.keys() == dt.keys() and len(da) == 5 * 400
    earlier = 0
    for k, a in da.items():
        t = dt[k]
        assert t["x_t1"] == a["x_t1"] and t["x_final_ts"] == a["x_final_ts"]
        assert t["time"] <= a["time"]
        earlier += t["time"] < a["time"]
    assert earlier > 0  # the run is loaded enough for TOMP to matter
    assert runs["tomp"].stats["mean_t2"] < runs["abcast"].stats["mean_t2"]
    assert runs["tomp"].stats["raised"] > 0 == runs["abcast"].stats["raised"]


def test_latency_split_fields() -> None:
    """x_t1 + x_t2 is 004's latency time: from the reception to the delivery."""
    res = sim(protocol="abcast", n=3, rate=200, messages=120, delay=LAN, seed=4)
    recv = {(r["process"], r["msg"]): r["time"] for r in res.records if r["kind"] == "recv"}
    d = deliveries(res.records)
    lat = []
    for k, r in d.items():
        assert r["x_t1"] > 0 and r["x_t2"] >= 0
        assert math.isclose(r["x_t1"] + r["x_t2"], r["time"] - recv[k], abs_tol=1e-12)
        Timestamp.parse(r["x_final_ts"])
        lat.append(r["time"] - recv[k])
    assert math.isclose(res.stats["mean_latency"], sum(lat) / len(lat))
    assert math.isclose(res.stats["mean_t1"] + res.stats["mean_t2"],
                        res.stats["mean_latency"])
    assert res.stats["mean_end_to_end"] > res.stats["mean_latency"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_checkers_pass_on_written_file(protocol: str, tmp_path) -> None:
    """Clean runs hold every property, liveness included, read back from a file; one run
    uses per-link delays (a slow host) and the quasi-periodic source."""
    slow = Delay("gamma", 0.01, cv2=0.4)
    configs = [
        dict(protocol=protocol, n=4, rate=500, messages=300, delay=LAN, seed=1,
             trace_id="lan"),
        dict(protocol=protocol, n=5, rate=100, messages=300, delay=LAN, seed=2,
             source="quasi-periodic", trace_id="slow-host",
             link_delays={(i, 4): slow for i in range(4)}),
    ]
    from tomkit.traces.writer import write_records

    for cfg in configs:
        res = sim(**cfg)
        assert res.stats["undelivered"] == 0
        path = tmp_path / f"{cfg['trace_id']}.jsonl"
        write_records(path, res.records, grouped=True)
        report = check_paths([path], select(ALL, Options(), liveness=True), workers=1)
        assert report.n_rejected == 0
        (outcome,) = report.outcomes
        got = {k: v for k, v in outcome.verdicts.items() if k in ALL}
        assert got == dict.fromkeys(ALL, Verdict.HOLDS), (cfg["trace_id"], outcome.results)


def test_tomp_raises_are_lower_bounds(monkeypatch) -> None:
    """004 section 3.2.3.2: a raised timestamp never exceeds the final one; the planted
    "raise-all" (max_next_ts over every acknowledgement) overshoots."""
    def run(variant: str | None) -> int:
        raised: list[tuple[str, Timestamp]] = []
        orig = TompProcess._anticipate

        def spy(self, f, out):
            orig(self, f, out)
            raised.extend((m, new) for m, _, new in out.raised)

        monkeypatch.setattr(TompProcess, "_anticipate", spy)
        res = sim("tomp", variant, n=4, rate=600, messages=300,
                           delay=Delay("exponential", 0.001), seed=3)
        monkeypatch.undo()
        final = {r["msg"]: Timestamp.parse(r["x_final_ts"])
                 for r in res.records if r["kind"] == "deliver"}
        assert len(raised) > 100
        return sum(new > final[m] for m, new in raised)

    assert run(None) == 0
    assert run("raise-all") > 0


@pytest.mark.parametrize("protocol,variant", [("abcast", "ignore-head"),
                                              ("abcast", "deliver-ud"),
                                              ("tomp", "ignore-head"),
                                              ("tomp", "raise-all")])
def test_planted_faults_are_caught(protocol: str, variant: str) -> None:
    """A variant that delivers before the timestamp is final (or raises too far) breaks
    total order on some seed, and the checker says so; the clean model on the same
    seeds does not."""
    caught = False
    for seed in range(1, 6):
        cfg = dict(n=4, rate=500, messages=200, delay=Delay("exponential", 0.001), seed=seed)
        v = verdicts(sim(protocol, variant, **cfg).records,
                     ["total-order-weak", "total-order-strong"])
        assert verdicts(sim(protocol, **cfg).records,
                        ["total-order-weak", "total-order-strong"]) == {
            "total-order-weak": Verdict.HOLDS, "total-order-strong": Verdict.HOLDS}
        if v["total-order-weak"] == Verdict.VIOLATED:
            assert v["total-order-strong"] == Verdict.VIOLATED
            caught = True
            break
    assert caught


def test_literal_counter_rule_is_not_a_total_order() -> None:
    """004's literal text (the counter only counts receptions) lets a host propose below
    a final timestamp it has delivered: the checker finds an inversion on some seed
    (model/abcast/abcast.py's decision)."""
    found = [seed for seed in range(1, 9)
             if verdicts(sim("abcast", "literal-counter", n=4, rate=500,
                                      messages=300, delay=Delay("exponential", 0.001),
                                      seed=seed).records,
                         ["total-order-weak"])["total-order-weak"] == Verdict.VIOLATED]
    assert found


def test_bad_config_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown protocol"):
        simulate(SimConfig(protocol="nope"))
    with pytest.raises(ValueError, match="at least 2"):
        sim(n=1)
    with pytest.raises(ValueError, match="source must be"):
        sim(source="bursty")
    with pytest.raises(ValueError, match="no link from p1 to itself"):
        sim(n=3, link_delays={("p1", 1): LAN})
    with pytest.raises(ValueError, match="unknown process"):
        sim(n=3, link_delays={("p1", "p7"): LAN})
    with pytest.raises(ValueError, match="--variant must be one of"):
        sim("abcast", "raise-all")
    with pytest.raises(ValueError, match="does not take delta"):
        simulate(SimConfig(protocol="abcast", options={"delta": 2}))
    with pytest.raises(ValueError, match="no failure handling"):
        sim("abcast", crashes=(("p1", 0.1),))


def _parser(add) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tomkit")
    add(p.add_subparsers(dest="command", required=True))
    return p


def test_cli_simulate_writes_checkable_trace(tmp_path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    args = _parser(simulate_cli.add_parser).parse_args(
        ["simulate", "--protocol", "abcast", "--n", "3", "--messages", "90",
         "--rate", "300", "--seed", "7", "--out", str(out)])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "seed 7" in text and "t1" in text and "t2" in text
    report = check_paths([out], select(None, Options(), liveness=True), workers=1)
    assert not report.violated and report.outcomes[0].verdicts["liveness"] == Verdict.HOLDS


def test_cli_options_are_the_protocols(tmp_path, capsys) -> None:
    """--variant is ABCAST's and TOMP's, --delta the ToTo family's: each is refused for
    a protocol that does not declare it; --crash is refused for protocols without
    failure handling."""
    parser = _parser(simulate_cli.add_parser)
    out = tmp_path / "t.jsonl.gz"
    args = parser.parse_args(["simulate", "--protocol", "tomp", "--n", "4", "--messages",
                              "80", "--seed", "3", "--delay", "gamma", "--variant",
                              "literal-counter", "--out", str(out)])
    assert args.func(args) == 0
    assert "tomp n=4 variant=literal-counter" in capsys.readouterr().out
    assert out.exists()
    for argv, err in [(["--protocol", "abcast", "--crash", "p1@0.1"], "no failure handling"),
                      (["--protocol", "abcast", "--delta", "2"], "--delta does not apply"),
                      (["--protocol", "toto", "--variant", "raise-all"],
                       "--variant does not apply"),
                      (["--protocol", "abcast", "--variant", "raise-all"],
                       "--variant must be one of")]:
        args = parser.parse_args(["simulate", *argv, "--out", str(out)])
        assert args.func(args) == 2
        assert err in capsys.readouterr().err
    args = parser.parse_args(["simulate", "--protocol", "abcast", "--out",
                              str(tmp_path / "t.txt")])
    assert args.func(args) == 2
