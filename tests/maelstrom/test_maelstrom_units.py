"""Unit tests of the harness's pieces: protocol framing, latency, partitions, the
services' consistency (seq-kv's stale reads really happen, and stay sequentially
consistent), the nemesis schedule and the topologies."""

import asyncio
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tomkit.maelstrom.nemesis import FAULTS, plan
from tomkit.maelstrom.network import Latency, Network
from tomkit.maelstrom.protocol import (
    ERRORS,
    Message,
    NodeProtocolError,
    decode,
    encode,
    is_definite,
)
from tomkit.maelstrom.services import LinKV, LwwKV, SeqKV
from tomkit.maelstrom.workloads.topology import TOPOLOGIES, topology

# ---- protocol --------------------------------------------------------------------------


def test_decode_a_message():
    m = decode(b'{"src":"n1","dest":"c3","body":{"type":"echo_ok","in_reply_to":4}}',
               "n1", 1)
    assert (m.src, m.dest, m.type, m.body["in_reply_to"]) == ("n1", "c3", "echo_ok", 4)


@pytest.mark.parametrize("line, problem", [
    (b"not json", "invalid JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b'{"dest":"c1","body":{"type":"x"}}', "'src' missing"),
    (b'{"src":"n1","body":{"type":"x"}}', "'dest' missing"),
    (b'{"src":"n1","dest":"c1"}', "'body' missing"),
    (b'{"src":"n1","dest":"c1","body":{}}', "'body.type' missing"),
    (b'{"src":"n1","dest":"c1","body":{"type":"x","msg_id":"7"}}', "'body.msg_id' is not"),
    (b'{"src":"n1","dest":"c1","body":{"type":"x","in_reply_to":true}}', "in_reply_to"),
    (b'{"src":"n2","dest":"c1","body":{"type":"x"}}', "not the node's own id"),
    (b'{"src":"n1","dest":"c1","body":{"type":"error","text":"x"}}', "integer 'code'"),
    (b'\xff\xfe', "invalid JSON"),
])
def test_decode_names_node_line_and_problem(line, problem):
    with pytest.raises(NodeProtocolError) as e:
        decode(line, "n1", 7)
    assert str(e.value).startswith("node n1, stdout line 7:")
    assert problem in str(e.value)


@given(st.dictionaries(st.text(min_size=1), st.one_of(st.integers(), st.text(),
                                                     st.lists(st.integers())), max_size=4))
@settings(max_examples=100, deadline=None)
def test_encode_decode_round_trip(extra):
    body = {**extra, "type": "t", "msg_id": 3}
    line = encode(Message("n0", "c1", body))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    back = decode(line[:-1], "n0", 1)
    assert back.body == json.loads(json.dumps(body))


@pytest.mark.parametrize("text, value", [
    ('123456789012345678901234567890', 123456789012345678901234567890),  # over 64 bits
    ('-9223372036854775809', -9223372036854775809),
    ('18446744073709551615', 18446744073709551615),
    ('NaN', None),  # the standard library's reading, as before orjson
    ('"\\ud800"', "\ud800"),  # a lone surrogate, which orjson rejects
    ('"n\u00e9ud \u00b5s"', "n\u00e9ud \u00b5s"),
])
def test_decode_reads_what_the_standard_library_reads(text, value):
    line = b'{"src":"n1","dest":"n2","body":{"type":"x","v":' + text.encode() + b"}}"
    v = decode(line, "n1", 1).body["v"]
    if value is None:
        assert v != v  # NaN
    else:
        assert v == value and type(v) is type(value)
        back = decode(encode(Message("n1", "n2", {"type": "x", "v": v}))[:-1], "n1", 1)
        assert back.body["v"] == value and type(back.body["v"]) is type(value)


def test_client_gives_up_at_each_deadline_and_counts_late_replies():
    from tomkit.maelstrom.client import Client

    async def main():
        sent: list[Message] = []
        loop = asyncio.get_running_loop()
        c = Client(0, "n0", sent.append, loop.time, [])
        slow = asyncio.ensure_future(c.rpc({"type": "read"}, 0.4))
        fast = asyncio.ensure_future(c.rpc({"type": "read"}, 0.1))  # an earlier deadline
        answered = asyncio.ensure_future(c.rpc({"type": "read"}, 0.1))
        await asyncio.sleep(0)
        assert [m.body["msg_id"] for m in sent] == [1, 2, 3]
        c.receive(Message("n0", "c0", {"type": "read_ok", "in_reply_to": 3}), "n0", 0.0)
        assert (await answered).body["type"] == "read_ok"
        assert await fast is None and not slow.done()  # given up at its own deadline
        assert await slow is None
        c.receive(Message("n0", "c0", {"type": "read_ok", "in_reply_to": 2}), "n0", 0.0)
        assert c.late == 1 and not c.faults and not c.pending

    asyncio.run(main())


def test_a_late_echo_is_slow_not_silent():
    """An echo answered after the client gave up is info in the history and a delivery
    in the trace: a loaded machine is not a validity violation; no answer at all is."""
    from types import SimpleNamespace

    from tomkit.maelstrom.client import Client, History
    from tomkit.maelstrom.workloads.echo import Echo

    async def main():
        loop = asyncio.get_running_loop()
        h = History()
        c = Client(0, "n0", lambda m: None, loop.time, [])
        harness = SimpleNamespace(history=h, cfg=SimpleNamespace(timeout=0.05))
        for _ in range(2):
            await Echo(harness).operation(c, random.Random(1))
        for op in h.ops:
            op.received_by, op.received_at = "n0", op.time
        c.receive(Message("n0", "c0", {"type": "echo_ok", "echo": h.ops[0].value,
                                       "in_reply_to": 1}), "n0", loop.time())
        return h

    h = asyncio.run(main())
    assert [op.type for op in h.ops] == ["info", "info"]
    recs = Echo(None).records(h)
    assert [(r["kind"], r["msg"]) for r in recs] == [
        ("send", h.ops[0].value), ("deliver", h.ops[0].value), ("send", h.ops[1].value)]


def test_error_codes_are_maelstroms():
    assert {c: e.name for c, e in ERRORS.items()}[11] == "temporarily-unavailable"
    assert is_definite(22) and is_definite(1)
    assert not is_definite(0) and not is_definite(13) and not is_definite(1000)


# ---- network ---------------------------------------------------------------------------


class FakeNode:
    def __init__(self):
        self.alive, self.got = True, []

    def send(self, msg):
        self.got.append(msg)


def network(latency=Latency(), nodes=("n0", "n1", "n2")):
    procs = {n: FakeNode() for n in nodes}
    got_client, faults = [], []
    net = Network(latency, random.Random(1), lambda: 0.0,
                  node_sink=lambda d: procs[d] if d in procs else False,
                  node_name=lambda n: n,
                  client_sink=lambda d: ((lambda m, s, t: got_client.append(m))
                                         if d.startswith("c") else None),
                  service_sink=lambda d: LinKV(random.Random(1), lambda: 0.0)
                  if d == "lin-kv" else None,
                  on_fault=faults.append)
    return net, procs, got_client, faults


def test_partition_drops_both_ways_and_heals():
    net, procs, _, _ = network()
    net.partition([["n0"], ["n1", "n2"]])
    net.route(Message("n0", "n1", {"type": "x"}))
    net.route(Message("n2", "n0", {"type": "x"}))
    net.route(Message("n1", "n2", {"type": "x"}))
    assert [s.fate for s in net.journal] == ["partition", "partition", "ok"]
    assert not procs["n1"].got and not procs["n0"].got and len(procs["n2"].got) == 1
    net.heal()
    net.route(Message("n0", "n1", {"type": "x"}))
    assert len(procs["n1"].got) == 1


def test_clients_are_never_cut_off():
    net, procs, got_client, _ = network()
    net.partition([["n0"], ["n1", "n2"]])
    net.route(Message("c0", "n0", {"type": "x", "msg_id": 1}))
    net.route(Message("n0", "c0", {"type": "x_ok", "in_reply_to": 1}))
    assert len(procs["n0"].got) == 1 and len(got_client) == 1


def test_down_node_drops():
    net, procs, _, _ = network()
    procs["n1"].alive = False
    net.route(Message("n0", "n1", {"type": "x"}))
    assert net.journal[0].fate == "down" and not procs["n1"].got


def test_unknown_destination_is_a_fault_answered_node_not_found():
    net, procs, _, faults = network()
    net.route(Message("n0", "n7", {"type": "x", "msg_id": 5}))
    assert "'n7', which names no node" in faults[0]
    (err,) = procs["n0"].got
    assert err.body["code"] == 1 and err.body["in_reply_to"] == 5 and err.src == "n7"


def test_services_answer_through_the_network():
    net, procs, _, _ = network()
    net.route(Message("n0", "lin-kv", {"type": "write", "key": "k", "value": 3, "msg_id": 1}))
    net.route(Message("n1", "lin-kv", {"type": "read", "key": "k", "msg_id": 9}))
    assert procs["n0"].got[0].body == {"type": "write_ok", "in_reply_to": 1}


def test_latency_delays_delivery():
    async def go():
        net, procs, _, _ = network(Latency(20, "constant"))
        loop = asyncio.get_running_loop()
        t = loop.time()
        net.route(Message("n0", "n1", {"type": "x"}))
        assert not procs["n1"].got
        while not procs["n1"].got:
            await asyncio.sleep(0.005)
        return loop.time() - t

    assert asyncio.run(go()) >= 0.019


@pytest.mark.parametrize("dist", ["constant", "uniform", "exponential"])
def test_latency_distributions_have_the_mean(dist):
    rng = random.Random(3)
    lat = Latency(10, dist)
    xs = [lat.sample(rng) for _ in range(20000)]
    assert min(xs) >= 0
    assert abs(sum(xs) / len(xs) - 0.010) < 0.0005


def test_bad_latency_is_refused():
    with pytest.raises(ValueError, match="unknown latency distribution"):
        Latency(1, "pareto")


# ---- services --------------------------------------------------------------------------


def call(svc, src, body):
    (reply,) = svc(Message(src, svc.name, {**body, "msg_id": 1}))
    return reply.body


def test_lin_kv_read_write_cas():
    kv = LinKV(random.Random(1), lambda: 0.0)
    assert call(kv, "n0", {"type": "read", "key": 1})["code"] == 20
    assert call(kv, "n0", {"type": "cas", "key": 1, "from": 0, "to": 1})["code"] == 20
    assert call(kv, "n0", {"type": "cas", "key": 1, "from": 0, "to": 1,
                           "create_if_not_exists": True})["type"] == "cas_ok"
    assert call(kv, "n1", {"type": "read", "key": 1})["value"] == 1
    assert call(kv, "n1", {"type": "cas", "key": 1, "from": 0, "to": 2})["code"] == 22
    assert call(kv, "n1", {"type": "write", "key": 1, "value": 5})["type"] == "write_ok"
    assert call(kv, "n0", {"type": "read", "key": 1})["value"] == 5
    assert call(kv, "n0", {"type": "frob"})["code"] == 10
    assert call(kv, "n0", {"type": "write", "key": 1})["code"] == 12


def test_seq_kv_reads_are_really_stale():
    kv = SeqKV(random.Random(2), lambda: 0.0)
    stale = 0
    for i in range(1, 200):
        call(kv, "n0", {"type": "write", "key": "x", "value": i})
        got = call(kv, "n1", {"type": "read", "key": "x"})
        stale += got.get("value") != i
    assert stale > 20 and kv.stale_reads == stale


def test_seq_kv_is_sequentially_consistent():
    """Each caller's reads never go back in the one order of writes, and a caller always
    sees its own writes."""
    kv = SeqKV(random.Random(5), lambda: 0.0)
    rng = random.Random(9)
    last_seen = {n: 0 for n in ("n0", "n1", "n2")}
    for i in range(1, 2000):
        n = rng.choice(sorted(last_seen))
        if rng.random() < 0.4:
            call(kv, n, {"type": "write", "key": "x", "value": i})
            last_seen[n] = i
        else:
            v = call(kv, n, {"type": "read", "key": "x"}).get("value", 0)
            assert v >= last_seen[n]
            last_seen[n] = v


def test_seq_kv_cas_sees_the_latest_value():
    kv = SeqKV(random.Random(2), lambda: 0.0)
    call(kv, "n0", {"type": "write", "key": "c", "value": 1})
    call(kv, "n0", {"type": "write", "key": "c", "value": 2})
    assert call(kv, "n1", {"type": "cas", "key": "c", "from": 2, "to": 3})["type"] == "cas_ok"
    assert call(kv, "n1", {"type": "read", "key": "c"})["value"] == 3


def test_lww_kv_copies_disagree_until_gossip():
    t = [0.0]
    kv = LwwKV(random.Random(4), lambda: t[0], gossip_interval=1.0)
    call(kv, "n0", {"type": "write", "key": "k", "value": "a"})
    seen = {call(kv, "n1", {"type": "read", "key": "k"}).get("value") for _ in range(50)}
    assert seen == {"a", None}  # a copy that has it, copies that do not
    for step in range(200):
        t[0] = 1.0 + step
        kv._gossip()
    seen = {call(kv, "n1", {"type": "read", "key": "k"}).get("value") for _ in range(50)}
    assert seen == {"a"}


# ---- nemesis and topology --------------------------------------------------------------


def test_nemesis_plan_is_seeded_and_alternates():
    nodes = [f"n{i}" for i in range(5)]
    a = plan(set(FAULTS), nodes, 1.0, 30.0, random.Random(7))
    b = plan(set(FAULTS), nodes, 1.0, 30.0, random.Random(7))
    assert a.events == b.events and len(a.events) > 10
    assert [e.action for e in a.events][:4] == ["start", "stop", "start", "stop"]
    for e in a.events:
        if e.fault in ("kill", "pause"):
            assert 1 <= len(e.nodes) <= 2  # a minority
        else:
            assert sorted(sum(map(list, e.groups), [])) == nodes
    assert {e.fault for e in a.events} == set(FAULTS)
    with pytest.raises(ValueError, match="unknown nemesis"):
        plan({"flood"}, nodes, 1.0, 10.0, random.Random(1))


@pytest.mark.parametrize("kind", TOPOLOGIES)
@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_topologies_are_symmetric_and_connected(kind, n):
    nodes = [f"n{i}" for i in range(n)]
    topo = topology(kind, nodes)
    assert set(topo) == set(nodes)
    for a, near in topo.items():
        assert a not in near
        for b in near:
            assert a in topo[b]
    seen, todo = {"n0"}, ["n0"]
    while todo:
        for b in topo[todo.pop()]:
            if b not in seen:
                seen.add(b)
                todo.append(b)
    assert seen == set(nodes)
