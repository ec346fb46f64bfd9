"""``tomkit prove`` reads the prover registry (fuzz/prove/provers.py): each protocol's
prover declares its options, the command line has no branch on a protocol and no list
of refused flags of its own. A prover added through the public hook is a ``--protocol``
value, its options flags, and a flag it does not declare is refused naming it."""

from __future__ import annotations

import pytest

from tomkit.cli import main
from tomkit.fuzz.prove.base import Prover, ProveUsageError
from tomkit.fuzz.prove.provers import PROVERS, by_protocol, register, rule_prover, unregister
from tomkit.model.process import Option
from tomkit.model.protocols import PROTOCOLS

SEEN: list[dict] = []


def fake_run(protocol, rule, opts, say, report):
    SEEN.append(dict(opts))
    if opts["depth"] < 1:
        raise ProveUsageError(f"--depth must be at least 1, got {opts['depth']}")
    say(f"{protocol} depth={opts['depth']}: proved")
    return 0


FAKE = Prover("fake", "a prover for the test", ("fake-protocol",),
              (Option("depth", int, 2, "how deep"), Option("n", int, 4, "processes")),
              fake_run)


@pytest.fixture
def fake():
    register(FAKE)
    SEEN.clear()
    try:
        yield FAKE
    finally:
        unregister("fake")


def test_every_protocol_has_one_prover_and_the_rule_prover_is_one():
    provers = by_protocol()
    assert {"abcast", "tomp", "qos", "toto", "gl-toto"} <= set(provers)
    assert set(provers) <= set(PROTOCOLS)  # a prover proves a protocol the models have
    assert provers["abcast"] is provers["tomp"]
    assert rule_prover().takes_rule and provers["toto"] is rule_prover()
    assert [p.name for p in PROVERS] == ["delivery", "timestamps", "qos-bound"]


def test_a_registered_prover_is_run_with_its_options(fake, capsys):
    assert main(["prove", "--protocol", "fake-protocol", "--depth", "5"]) == 0
    assert capsys.readouterr().out == "fake-protocol depth=5: proved\n"
    assert SEEN == [{"depth": 5, "n": 4}]  # n: its own default
    assert main(["prove", "--protocol", "fake-protocol", "--depth", "0"]) == 2
    assert "--depth must be at least 1" in capsys.readouterr().err


def test_a_flag_the_prover_does_not_declare_is_refused(fake, capsys):
    assert main(["prove", "--protocol", "fake-protocol", "--delta", "1", "--k", "2"]) == 2
    err = capsys.readouterr().err
    assert "--delta, --k do not go with the fake prover" in err
    assert main(["prove", "toto", "--n", "3", "--depth", "1"]) == 2
    assert "--depth does not go with the delivery prover" in capsys.readouterr().err
    assert main(["prove", "toto", "--protocol", "fake-protocol"]) == 2
    assert "not both" in capsys.readouterr().err
    assert SEEN == []


def test_a_protocol_has_one_prover(fake):
    with pytest.raises(ValueError, match="fake-protocol is claimed"):
        register(Prover("other", "t", ("fake-protocol",), (), fake_run))
    assert [p.name for p in PROVERS].count("other") == 0


def test_the_toto_protocols_prove_their_rule(capsys):
    assert main(["prove", "--protocol", "toto", "--n", "3", "--delta", "2",
                 "--property", "agreement"]) == 0
    assert capsys.readouterr().out.startswith("toto n=3 delta=2")
