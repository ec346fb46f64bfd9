"""The membership vocabulary (model/events.py) and the capabilities protocols declare
(model/process.py): every protocol refuses, in one line naming it and the event, each
event it does not honour, at every entry point (the simulator, the Python API, the
fuzzer, the replayer); the schedule's checks and its old spellings."""

from __future__ import annotations

import pytest

import tomkit
from tomkit.fuzz.process_machine import process_machine
from tomkit.model.conform import ReplayError, replay
from tomkit.model.events import EVENTS, Event, parse_at, schedule
from tomkit.model.process import Member, Protocol
from tomkit.model.protocols import PROTOCOLS
from tomkit.model.sim import SimConfig, simulate

#: one schedule per event (a recover needs its crash)
SCHEDULES = {
    "crash": dict(crashes=[("p1", 0.01)]),
    "recover": dict(crashes=[("p1", 0.01)], recovers=[("p1", 0.02)]),
    "join": dict(joins=[("p3", 0.01)]),
    "leave": dict(leaves=[("p1", 0.01)]),
    "partition": dict(partitions=[(0.01, [["p0", "p1"]])]),
    "heal": dict(heals=[0.01]),
    "renegotiate": dict(renegotiations=[("p1", 0.01, (4, 2))]),
}

REFUSED = [(name, e) for name, p in PROTOCOLS.items() for e in EVENTS if not p.honours(e)]


def refused_first(p: Protocol, event: str) -> str:
    """The event the refusal names: the schedule's first one the protocol refuses."""
    return "crash" if event == "recover" and not p.honours("crash") else event


def test_every_protocol_declares_its_events_from_the_vocabulary():
    assert REFUSED  # some protocol refuses something
    for p in PROTOCOLS.values():
        assert p.events <= set(EVENTS)
        assert p.crashes == p.honours("crash")
        if p.service is None and p.events & {"join", "leave", "recover"}:
            # joins by itself: the drivers call the Member hooks
            assert all(isinstance(q, Member) for q in p.make(["p0", "p1", "p2"],
                                                              p.resolve(), 1.0))
        if p.events & {"partition", "heal"}:
            assert p.service is not None  # partitions go through a membership service


@pytest.mark.parametrize("name,event", REFUSED)
def test_the_simulator_and_the_api_refuse_in_one_line(name, event):
    p = PROTOCOLS[name]
    first = refused_first(p, event)
    with pytest.raises(ValueError) as e:
        simulate(SimConfig(protocol=name, n=4, messages=2, **SCHEDULES[event]))
    text = str(e.value)
    assert text.startswith(f"{name} cannot honour {first} (the membership events it "
                           "honours: ") and "\n" not in text
    with pytest.raises(ValueError, match=f"^{name} cannot honour {first} "):
        tomkit.simulate(name, n=4, messages=2, **SCHEDULES[event])


def test_the_refusal_lists_what_the_protocol_honours():
    with pytest.raises(ValueError) as e:
        simulate(SimConfig(protocol="abcast", n=3, messages=2, heals=[0.1]))
    assert str(e.value) == ("abcast cannot honour heal (the membership events it honours: "
                            "none)")


@pytest.mark.parametrize("name", [n for n, p in PROTOCOLS.items()
                                  if p.timing is None and not p.honours("crash")])
def test_the_fuzzer_refuses_crashes_a_protocol_cannot_honour(name):
    with pytest.raises(ValueError, match=f"^{name} cannot honour crash \\(the membership "
                       "events it honours: "):
        process_machine(name, 3, max_crashes=1)


@pytest.mark.parametrize("name", [n for n, p in PROTOCOLS.items()
                                  if p.timing is None and not p.honours("join")])
def test_the_fuzzer_refuses_joins_a_protocol_cannot_honour(name):
    with pytest.raises(ValueError, match=f"^{name} cannot honour join \\(the membership "):
        process_machine(name, 3, spares=1)


def _trace(*extra: dict) -> list[dict]:
    base = [{"trace": "t", "process": p, "kind": "send", "msg": f"{p}.1", "time": 0.0}
            for p in ("p0", "p1", "p2")]
    return base + list(extra)


@pytest.mark.parametrize("name,kind,event", [("toto", "join", "join"),
                                             ("abcast", "crash", "crash"),
                                             ("toto-dynamic", "leave", "leave")])
def test_the_replayer_refuses_a_recorded_event_naming_the_record(name, kind, event):
    rec = {"trace": "t", "process": "p2", "kind": kind, "time": 1.0}
    with pytest.raises(ReplayError, match=f"^{name} cannot honour {event} at record 1 of "
                       "p2 \\(the membership events it honours: "):
        replay(_trace(rec), name)


def test_the_replayer_reads_a_join_after_a_crash_as_a_recover():
    recs = _trace({"trace": "t", "process": "p2", "kind": "crash", "time": 1.0},
                  {"trace": "t", "process": "p2", "kind": "join", "time": 2.0})
    with pytest.raises(ReplayError, match="^toto cannot honour recover at record 2 of p2, "
                       "a join after its crash \\("):
        replay(recs, "toto")


def test_a_protocol_declaring_an_unknown_event_is_refused():
    with pytest.raises(ValueError, match="unknown membership events \\['rejoin'\\]"):
        Protocol(name="x", title="x", make=lambda *a: [], events=frozenset({"rejoin"}))


# ------------------------------------------------------------------ the schedule


def idx(p):
    return int(str(p).removeprefix("p"))


def test_schedule_orders_by_kind_and_keeps_the_given_order():
    got = schedule(idx, crashes=[("p2", 0.3), ("p1", 0.1)], recovers=[("p2", 0.5)],
                   joins=[("p3", 0.2)], leaves=[("p0", 0.4)],
                   partitions=[(0.6, [["p0"], ["p1", "p2"]])], heals=[0.7])
    assert got == [Event(0.3, "crash", 2), Event(0.1, "crash", 1), Event(0.5, "recover", 2),
                   Event(0.2, "join", 3), Event(0.4, "leave", 0),
                   Event(0.6, "partition", -1, ((0,), (1, 2))), Event(0.7, "heal")]


@pytest.mark.parametrize("kw,message", [
    (dict(recovers=[("p1", 0.2)]), "recovers: p1 recovers at 0.2 without a crash before"),
    (dict(crashes=[("p1", 0.3)], recovers=[("p1", 0.2)]), "without a crash before"),
    (dict(crashes=[("p1", 0.1)], recovers=[("p1", 0.2), ("p1", 0.3)]),
     "p1 recovers at 0.3 without a crash before"),
    (dict(joins=[("p1", -1.0)]), "joins: the time of join p1 must be finite and >= 0"),
    (dict(crashes=[("p1", float("inf"))]), "crashes: the time of crash p1 must be finite"),
    (dict(heals=["soon"]), "heals: the time of a heal must be finite"),
    (dict(partitions=[(float("nan"), [["p0"]])]), "partitions: the time of a partition"),
])
def test_schedule_refuses_bad_events_naming_them(kw, message):
    with pytest.raises(ValueError, match=message):
        schedule(idx, **kw)


def test_the_old_spellings_read_with_a_warning():
    with pytest.warns(FutureWarning, match="a join of a crashed process \\(p1 at 0.2\\) is "
                      "deprecated: spell it recover"):
        got = schedule(idx, crashes=[("p1", 0.1)], joins=[("p1", 0.2)])
    assert got == [Event(0.1, "crash", 1), Event(0.2, "recover", 1)]
    with pytest.warns(FutureWarning, match="a partition into no groups is deprecated"):
        assert schedule(idx, partitions=[(0.4, [])]) == [Event(0.4, "heal")]


def test_a_join_after_a_recover_and_a_leave_is_a_join():
    got = schedule(idx, crashes=[("p1", 0.1)], recovers=[("p1", 0.2)],
                   leaves=[("p1", 0.3)], joins=[("p1", 0.4)])
    assert [e.kind for e in got] == ["crash", "recover", "join", "leave"]


def test_parse_at_names_the_flag_and_the_entry():
    assert parse_at("--crash", "p1@0.5,p2@1") == [("p1", 0.5), ("p2", 1.0)]
    for bad in ("p1", "@0.5", "p1@-1", "p1@inf", "p1@x"):
        with pytest.raises(ValueError, match=f"^--crash: expected PROCESS@TIME.*got "
                           f"'{bad}'"):
            parse_at("--crash", bad)


def test_the_api_takes_the_command_line_text_too():
    a = tomkit.simulate("qos", n=4, messages=30, rate=20.0, seed=4, joins="p3@0.2",
                        leaves=[("p1", 0.4)])
    b = tomkit.simulate("qos", n=4, messages=30, rate=20.0, seed=4, joins=[("p3", 0.2)],
                        leaves="p1@0.4")
    assert a.records == b.records
    # p3's join record is at its join_OK, which may come after p1's leave
    assert sorted(r["kind"] for r in a.records if r["kind"] in ("join", "leave")) == [
        "join", "leave"]
