"""Tests of model/process.py, model/sim.py and model/simulate_cli.py: processes ACK the
heads of their views as in 000 Figure 1; the simulator is deterministic given its seed,
keeps links FIFO, and every simulated run of every rule, clean or with crashes, passes
the safety checkers of tomkit.checker (and liveness when no process crashes); ToTo's
index of latency is below all-ack's n (000 section 6); the CLI writes a checkable file."""

from __future__ import annotations

import argparse
import dataclasses
import doctest
import math
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import tomkit.model.toto.process as process_mod
from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.cli import simulate as simulate_cli
from tomkit.model import protocols
from tomkit.model.net.links import Delay
from tomkit.model.process import Output
from tomkit.model.sim import SimConfig, simulate
from tomkit.model.toto.dag import Message
from tomkit.model.toto.process import TotoProcess as Process
from tomkit.model.toto.rules import RULES

SAFETY = ["integrity", "total-order-weak", "total-order-strong", "global-order",
          "causal-order", "fifo-order"]
#: (rule, delta): the ToTo rules at the least delta they allow, G-ToTo/GL-ToTo also below
#: n/2 (002 section 4)
RUNS = [("all-ack", None), ("toto", 3), ("s-toto", 3), ("g-toto", 3), ("gl-toto", 3),
        ("g-toto", 1), ("gl-toto", 2)]


def verdicts(records: list[dict], names: list[str]) -> dict[str, Verdict]:
    trace = Trace.from_records(records)
    return {n: properties()[n].check(trace, Options()).verdict for n in names}


def test_doctests() -> None:
    assert doctest.testmod(process_mod).failed == 0


# ------------------------------------------------------------------------------ process


def test_send_acks_heads_of_view_as_in_figure1() -> None:
    """000 Figure 1: m_d,2 explicitly ACKs m_c,1 and m_e,2, the heads of d's view."""
    d = Process("d", ["a", "b", "c", "d", "e"], "toto")
    d.receive(Message("a1", "a"))
    d1, _ = d.send("d1")
    assert d1.deps == ("a1",)
    for m in [Message("e1", "e", ("a1",)), Message("c1", "c", ("d1",)),
              Message("e2", "e", ("e1",))]:
        d.receive(m)
    assert not d.covered()
    d2, st = d.send("d2")
    assert d2.deps == ("c1", "e2")
    assert st.released == ["d2"] and d.covered()


def test_receive_buffers_until_causally_closed() -> None:
    p = Process("a", ["a", "b", "c"], "all-ack")
    st = p.receive(Message("c1", "c", ("b1",)))
    assert st.released == [] and st.delivered == []
    st = p.receive(Message("b1", "b"))
    assert st.released == ["b1", "c1"]
    assert p.receive(Message("b1", "b")).released == []  # a duplicate changes nothing


def test_crash_deferred_while_messages_of_q_are_buffered() -> None:
    """Crash(q) waits for q's buffered messages (000 section 5.1: no message of q comes
    after Crash(q)), then counts q as heard from (Figure 4), unblocking all-ack."""
    p = Process("a", ["a", "b", "c"], "all-ack")
    p.send("a1")
    p.receive(Message("c1", "c", ("b1",)))          # waits for b1
    st = p.crash("c")
    assert p.pending_crashes == ("c",) and st.crashes_applied == []
    st = p.receive(Message("b1", "b", ("a1",)))
    assert st.released == ["b1", "c1"] and st.crashes_applied == ["c"]
    assert p.dag.defunc == {"c"}
    assert [d.msg for d in st.delivered] == ["a1"]
    assert st.delivered[0].index_of_latency == 3


# ---------------------------------------------------------------------------- simulator


def test_deterministic_given_seed() -> None:
    cfg = SimConfig(protocol="toto", n=5, messages=200, source="quasi-periodic",
                    delay=Delay("gamma", 0.002), crashes=(("p1", 0.1),), seed=7)
    a, b = simulate(cfg), simulate(cfg)
    assert a.records == b.records
    assert {k: v for k, v in a.stats.items() if k != "wall_time"} == \
        {k: v for k, v in b.stats.items() if k != "wall_time"}
    c = simulate(SimConfig(**{**cfg.__dict__, "seed": 8}))
    assert c.records != a.records


@contextmanager
def spied(rule: str, cls: type[Process]) -> Iterator[str]:
    """The ToTo-family protocol ``rule`` made of ``cls`` (a subclass that looks on),
    registered for the duration under a name of its own, which is given. The simulator
    calls the subclass's methods; the process's calls of its own methods may not come
    there (model/kernel.py may have compiled TotoProcess), so a spy overrides only what
    the simulator calls."""
    name = f"{rule}~spied"
    protocols.PROTOCOLS[name] = dataclasses.replace(protocols.protocol(rule), name=name,
                                                    make=process_mod.make(rule, cls))
    try:
        yield name
    finally:
        del protocols.PROTOCOLS[name]


def test_links_are_fifo() -> None:
    """Per link, messages arrive in sending order, although the delays (exponential, mean
    far above the gap between sends) would reorder many of them."""
    sent: dict[str, list[str]] = {}
    arrived: dict[tuple[str, str], list[str]] = {}

    class Spy(Process):
        def sends(self, out: Output) -> Output:
            sent.setdefault(self.name, []).extend(t.packet.id for t in out.sends)
            return out

        def on_send(self, mid: str, now: float) -> Output:
            return self.sends(super().on_send(mid, now))

        def on_timer(self, now: float) -> Output:
            return self.sends(super().on_timer(now))

        def on_receive(self, msg: Message, now: float) -> Output:
            if msg.sender != self.name:
                arrived.setdefault((msg.sender, self.name), []).append(msg.id)
            return self.sends(super().on_receive(msg, now))

    with spied("all-ack", Spy) as name:
        simulate(SimConfig(protocol=name, n=4, messages=300, rate=1000.0,
                           delay=Delay("exponential", 0.02), seed=3))
    assert len(arrived) == 12
    assert sum(map(len, sent.values())) > 300  # the application's, and idle ACKs
    for (s, _r), ids in arrived.items():
        assert ids == sent[s]


def test_delay_distributions() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    assert list(Delay("constant", 0.5).sample(rng, 3)) == [0.5] * 3
    g = Delay("gamma", 0.02, cv2=0.05).sample(rng, 20000)
    assert g.min() >= 0.01                      # the shift: half the mean by default
    assert abs(g.mean() - 0.02) < 0.0005 and abs(g.var() / 0.02 ** 2 - 0.05) < 0.01
    e = Delay("exponential", 0.01).sample(rng, 20000)
    assert abs(e.mean() - 0.01) < 0.0005
    with pytest.raises(ValueError):
        Delay("uniform", 1.0)


@pytest.mark.parametrize("rule,delta", RUNS)
@pytest.mark.parametrize("scenario", ["clean", "crash"])
def test_every_rule_passes_the_checkers(rule: str, delta: int | None, scenario: str) -> None:
    crashes = () if scenario == "clean" else (("p2", 0.15), ("p4", 0.3))
    links = {("p0", f"p{j}"): Delay("gamma", 0.02, cv2=0.4) for j in range(1, 6)}
    res = simulate(SimConfig(protocol=rule, n=6, options={"delta": delta}, messages=240, rate=200.0,
                             source="poisson", delay=Delay("exponential", 0.003),
                             link_delays=links, crashes=crashes, detection_delay=0.0,
                             seed=11))
    assert res.stats["undelivered"] == 0
    got = verdicts(res.records, SAFETY + ["liveness"])
    assert got == {n: Verdict.HOLDS for n in got}
    kinds = {r["kind"] for r in res.records}
    assert "view" not in kinds
    assert ("crash" in kinds) == (scenario == "crash")


@pytest.mark.parametrize("source", ["periodic", "quasi-periodic", "poisson"])
@pytest.mark.parametrize("delay", ["constant", "exponential", "gamma"])
def test_sources_and_delays_clean_runs_are_live(source: str, delay: str) -> None:
    res = simulate(SimConfig(protocol="gl-toto", n=5, options={"delta": 2}, messages=150,
                             source=source, delay=Delay(delay, 0.002), seed=5))
    assert res.stats["sends"] == 150 and res.stats["deliveries"] == 150 * 5
    got = verdicts(res.records, SAFETY + ["liveness"])
    assert got == {n: Verdict.HOLDS for n in got}


def test_records_carry_time_deps_and_index_of_latency() -> None:
    res = simulate(SimConfig(protocol="toto", n=4, messages=40, seed=2))
    sends = [r for r in res.records if r["kind"] == "send"]
    delivers = [r for r in res.records if r["kind"] == "deliver"]
    assert all("deps" in r and "time" in r for r in sends)
    assert any(r["deps"] for r in sends)
    assert all(3 <= r["x_index_of_latency"] <= 4 for r in delivers)  # delta + 1 .. n
    times = [r["time"] for r in res.records]
    assert times == sorted(times)


def test_toto_index_of_latency_below_all_ack() -> None:
    """000 section 6: with n = 8 and delta = 4, ToTo's mean index of latency is well below
    all-ack's 8, and its latency lower."""
    base = dict(n=8, options={"delta": 4}, messages=800, rate=100.0, source="poisson",
                delay=Delay("exponential", 0.001), seed=1)
    all_ack = simulate(SimConfig(protocol="all-ack", **base)).stats
    toto = simulate(SimConfig(protocol="toto", **base)).stats
    assert all_ack["mean_index_of_latency"] == 8
    assert toto["mean_index_of_latency"] < 7.5
    assert toto["mean_latency"] < all_ack["mean_latency"]
    assert 1 <= toto["mean_width"] <= 8


def test_bad_configs() -> None:
    for cfg in [SimConfig(protocol="nope"), SimConfig(source="bursty"),
                SimConfig(crashes=(("p9", 0.1),)), SimConfig(n=1), SimConfig(rate=0)]:
        with pytest.raises(ValueError):
            simulate(cfg)
    with pytest.raises(ValueError):      # ToTo's delta must be in [n/2, n)
        simulate(SimConfig(protocol="toto", n=8, options={"delta": 2}, messages=10))


def test_no_messages() -> None:
    res = simulate(SimConfig(messages=0))
    assert res.records == [] and res.stats["deliveries"] == 0
    assert math.isnan(res.stats["mean_latency"])


# ---------------------------------------------------------------------------------- CLI


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tomkit")
    simulate_cli.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_cli_writes_a_checkable_trace(tmp_path, capsys: pytest.CaptureFixture,
                                      suffix: str) -> None:
    from tomkit.cli import main

    out = tmp_path / f"run{suffix}"
    args = _parse(["simulate", "--protocol", "toto", "--n", "6", "--delta", "3",
                   "--source", "periodic", "--rate", "100", "--messages", "120",
                   "--delay", "gamma", "--mean-delay", "0.002", "--crash", "p1@0.1",
                   "--detection-delay", "0.01", "--seed", "4", "--out", str(out)])
    assert simulate_cli.run(args) == 0
    text = capsys.readouterr().out
    assert "seed 4" in text and "mean index of latency" in text
    assert main(["check", str(out), "-q"]) == 0
    assert main(["check", str(out), "-q", "--liveness"]) == 0


def test_cli_bad_arguments(tmp_path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        _parse(["simulate", "--crash", "p1", "--out", "x.jsonl"])
    args = _parse(["simulate", "--out", str(tmp_path / "x.txt"), "--messages", "5"])
    assert simulate_cli.run(args) == 2
    args = _parse(["simulate", "--crash", "p99@1", "--out", str(tmp_path / "x.jsonl")])
    assert simulate_cli.run(args) == 2
    assert "p99" in capsys.readouterr().err


def test_registered_rules_all_simulate() -> None:
    assert set(RULES) == {"all-ack", "toto", "s-toto", "g-toto", "gl-toto"}


def test_crash_waits_for_causally_buffered_messages() -> None:
    """p2's last messages ACK p0's, which crawl to p1 on a slow link: with no detection
    delay, Crash(p2) reaches p1 while p2's messages still wait for p0's there, and p1
    defers it (else the DagView would refuse it); the run stays safe and live."""
    deferred = []

    class Spy(Process):
        def on_crash(self, q: int, now: float) -> Output:
            out = super().on_crash(q, now)
            deferred.extend((self.name, q) for q in self.pending_crashes)
            return out

    for rule in ["all-ack", "toto", "gl-toto"]:
        with spied(rule, Spy) as name:
            res = simulate(SimConfig(protocol=name, n=4, options={"delta": 2}, messages=200,
                                     rate=200.0, source="periodic",
                                     delay=Delay("constant", 0.001),
                                     link_delays={("p0", "p1"): Delay("constant", 0.05)},
                                     crashes=(("p2", 0.1),), detection_delay=0.0, seed=1))
        assert res.stats["undelivered"] == 0
        got = verdicts(res.records, SAFETY + ["liveness"])
        assert got == {n: Verdict.HOLDS for n in got}
    assert ("p1", "p2") in deferred


@pytest.mark.parametrize("source", ["poisson", "periodic"])
def test_protocols_on_one_seed_see_the_same_inputs(source):
    # ACK-only traffic differs per protocol; application sends and their delays must not
    def sends(protocol):
        cfg = SimConfig(protocol=protocol, n=5, source=source, rate=50, messages=150, seed=7)
        res = simulate(cfg)
        return {r["msg"]: r["time"] for r in res.records if r["kind"] == "send"}

    base = sends("all-ack")
    for protocol in ("toto", "gl-toto"):
        assert sends(protocol) == base
