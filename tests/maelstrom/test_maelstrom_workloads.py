"""The workloads' traces and own checks on planted histories: clean ones hold, each
anomaly is found by the property (or check) that names it, with nothing else."""

from types import SimpleNamespace

import pytest

import tomkit
from tomkit.maelstrom.client import History, Op
from tomkit.maelstrom.workloads import WORKLOADS


def harness():
    return SimpleNamespace(cfg=SimpleNamespace(workload="w", seed=1, timeout=1.0,
                                               key_count=1),
                           faults=[])


class Script:
    """A history written by hand: broadcasts (value, node, acked) and reads."""

    def __init__(self):
        self.h = History()
        self.t = 0.0

    def op(self, f, node, value, result, type_="ok", final=False):
        self.t += 1.0
        op = Op(len(self.h.ops), 0, node, f, value, self.t, type=type_,
                done_time=self.t + 0.5, result=result, received_by=node,
                received_at=self.t + 0.1, replied_by=node if type_ == "ok" else None,
                replied_at=self.t + 0.2)
        if final:
            op.f = "final-read"
        self.h.ops.append(op)
        return op

    def bcast(self, v, node="n0", type_="ok"):
        return self.op("broadcast", node, v, {"type": "broadcast_ok"}, type_)

    def read(self, node, values, final=False):
        return self.op("read", node, None, list(values), final=final)


def judge(tmp_path, name, script, finals=()):
    w = WORKLOADS[name](harness())
    w.finals = [op for op in script.h.ops if op.f == "final-read"]
    # the harness logs each node's join at its init_ok, before any client operation
    joins = [{"process": n, "kind": "join", "time": 0.0}
             for n in sorted({op.node for op in script.h.ops})]
    recs = [{"trace": "t", **r} for r in joins + w.records(script.h)]
    recs.sort(key=lambda r: r["time"])
    path = tmp_path / "t.jsonl"
    tomkit.write(path, recs)
    report = tomkit.check(path, properties=list(w.properties))
    verdicts = {n: str(v) for n, v in report.outcomes[0].verdicts.items()}
    return verdicts, w.anomalies(script.h)


def clean(final_b=(1, 2)):
    s = Script()
    s.bcast(1, "n0")
    s.bcast(2, "n1")
    s.read("n0", [1])
    s.read("n1", [1, 2])
    s.read("n0", [1, 2], final=True)
    s.read("n1", list(final_b), final=True)
    return s


@pytest.mark.parametrize("name", ["broadcast", "total-order-broadcast"])
def test_clean_history_holds(tmp_path, name):
    verdicts, anomalies = judge(tmp_path, name, clean())
    assert set(verdicts.values()) == {"holds"} and anomalies == []


def test_broadcast_reads_are_sets(tmp_path):
    verdicts, anomalies = judge(tmp_path, "broadcast", clean(final_b=(2, 1)))
    assert set(verdicts.values()) == {"holds"} and anomalies == []


def two_orders():
    s = Script()
    s.bcast(1, "n0")
    s.bcast(2, "n1")
    s.read("n0", [1])
    s.read("n1", [2])
    s.read("n0", [1, 2], final=True)
    s.read("n1", [2, 1], final=True)
    return s


def test_total_order_catches_two_orders(tmp_path):
    verdicts, anomalies = judge(tmp_path, "total-order-broadcast", two_orders())
    assert verdicts["prefix-order"] == "violated"
    assert verdicts["integrity"] == verdicts["validity"] == verdicts["agreement"] == "holds"
    assert anomalies == []
    verdicts, anomalies = judge(tmp_path, "broadcast", two_orders())  # sets: no order
    assert set(verdicts.values()) == {"holds"} and anomalies == []


@pytest.mark.parametrize("name", ["broadcast", "total-order-broadcast"])
def test_lost_acknowledged_value(tmp_path, name):
    s = clean()
    s.bcast(3, "n1")  # acknowledged, then in no read: n1 never delivers what it got
    verdicts, anomalies = judge(tmp_path, name, s)
    assert verdicts["validity"] == "violated"
    assert [a.name for a in anomalies] == ["lost", "lost"]  # missing from both finals
    assert "missing from the final read of n0: 3" in anomalies[0].text


@pytest.mark.parametrize("name", ["broadcast", "total-order-broadcast"])
def test_one_node_without_a_value(tmp_path, name):
    s = Script()
    s.bcast(1, "n0")
    s.read("n0", [1], final=True)
    s.read("n1", [], final=True)
    verdicts, anomalies = judge(tmp_path, name, s)
    assert verdicts["agreement"] == "violated" and verdicts["validity"] == "holds"
    assert [a.name for a in anomalies] == ["lost"]


@pytest.mark.parametrize("name", ["broadcast", "total-order-broadcast"])
def test_unexpected_and_duplicate_values(tmp_path, name):
    s = clean()
    s.read("n1", [1, 2, 7])  # 7 was never broadcast
    verdicts, _ = judge(tmp_path, name, s)
    assert verdicts["integrity"] == "violated"
    s = clean()
    s.read("n0", [1, 2, 2])  # 2 twice in one read
    verdicts, _ = judge(tmp_path, name, s)
    assert verdicts["integrity"] == "violated"


def test_definitely_failed_broadcast_is_not_a_send(tmp_path):
    s = clean()
    s.bcast(9, "n0", type_="fail")
    verdicts, anomalies = judge(tmp_path, "broadcast", s)
    assert set(verdicts.values()) == {"holds"} and anomalies == []
    s.read("n0", [1, 2, 9])  # a value that definitely did not happen shows up
    verdicts, _ = judge(tmp_path, "broadcast", s)
    assert verdicts["integrity"] == "violated"


def test_broadcast_set_that_shrinks(tmp_path):
    s = clean()
    s.read("n0", [2])
    _, anomalies = judge(tmp_path, "broadcast", s)
    assert [a.name for a in anomalies] == ["lost"]
    assert "n0 showed 1 in a read and not in a later one" in anomalies[0].text


def test_total_order_read_that_rewrites_the_sequence(tmp_path):
    s = clean()
    s.read("n0", [2, 1])
    verdicts, anomalies = judge(tmp_path, "total-order-broadcast", s)
    assert [a.name for a in anomalies] == ["nonmonotonic read"]
    assert "position 0 was 1, now 2" in anomalies[0].text


def test_echo_wrong_and_unanswered(tmp_path):
    s = Script()
    s.op("echo", "n0", "hello", "hello")
    verdicts, _ = judge(tmp_path, "echo", s)
    assert set(verdicts.values()) == {"holds"}
    s.op("echo", "n0", "again", "agayn")
    verdicts, _ = judge(tmp_path, "echo", s)
    assert verdicts["integrity"] == "violated" and verdicts["validity"] == "violated"
    s = Script()
    s.op("echo", "n0", "hello", None, type_="info")
    verdicts, _ = judge(tmp_path, "echo", s)
    assert verdicts == {"integrity": "holds", "validity": "violated"}
