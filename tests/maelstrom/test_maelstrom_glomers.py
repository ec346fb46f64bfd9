"""The Gossip Glomers workloads (unique-ids, g-set, g-counter, pn-counter): their checks
on planted histories, and the example nodes end to end, small and bounded. Each
correct node stays valid under partitions; each broken node is caught by the check its
bug breaks. Assertions are on outcomes, never on how many operations a loaded machine
managed."""

import subprocess
import sys
from types import SimpleNamespace

import pytest
from maelstrom_nodes import shipped

import tomkit
from tomkit.maelstrom.client import History, Op
from tomkit.maelstrom.harness import RunConfig, run
from tomkit.maelstrom.workloads import WORKLOADS
from tomkit.maelstrom.workloads.counter import MAX_SUMS, acceptable_sums

# ---- planted histories -----------------------------------------------------------------


def history(*ops):
    """ops: (f, node, value, type, result, time); the reply comes 0.5 s after."""
    h = History()
    for f, node, value, type_, result, t in ops:
        h.ops.append(Op(len(h.ops), 0, node, f, value, t, type=type_, done_time=t + 0.5,
                        result=result, received_by=node, received_at=t + 0.1,
                        replied_by=node if type_ == "ok" else None, replied_at=t + 0.2))
    return h


def counter(name, h):
    w = WORKLOADS[name](SimpleNamespace(cfg=SimpleNamespace(timeout=1.0), faults=[]))
    w.finals = [op for op in h.ops if op.f == "final-read"]
    return [(a.name, a.ops) for a in w.anomalies(h)]


def test_acceptable_sums_are_every_subset():
    assert acceptable_sums(10, []) == {10}
    assert acceptable_sums(10, [3, -2]) == {10, 13, 8, 11}
    assert acceptable_sums(0, [0, 1, 1]) == {0, 1, 2}
    lo, hi = acceptable_sums(0, [1 << i for i in range(22)] + [-5])  # past MAX_SUMS
    assert (lo, hi) == (-5, (1 << 22) - 1) and (1 << 21) > MAX_SUMS // 2


def test_counter_clean_history_holds():
    h = history(("add", "n0", 3, "ok", None, 1), ("add", "n1", -2, "ok", None, 2),
                ("add", "n1", 4, "info", None, 3), ("add", "n0", 5, "fail", None, 4),
                ("read", "n0", None, "ok", 3, 5),  # stale, and allowed
                ("final-read", "n0", None, "ok", 5, 9), ("final-read", "n1", None, "ok", 5, 9))
    assert counter("pn-counter", h) == []
    h.ops[-1].result = 1 + 4  # the unknown add may have happened: 1 + 4 is acceptable too
    assert counter("pn-counter", h) == []


def test_counter_final_read_outside_the_acceptable_set():
    h = history(("add", "n0", 3, "ok", None, 1), ("add", "n1", 2, "ok", None, 2),
                ("add", "n1", 4, "info", None, 3),
                ("final-read", "n0", None, "ok", 5, 9), ("final-read", "n1", None, "ok", 3, 9))
    assert counter("g-counter", h) == [("final read outside the acceptable set", [4])]
    h.ops[-1].result = 3 + 2 + 2  # an add applied twice, below the bound of all adds
    assert counter("g-counter", h) == [("final read outside the acceptable set", [4])]


def test_counter_impossible_read_at_any_time():
    h = history(("add", "n0", 3, "ok", None, 1), ("read", "n1", None, "ok", 4, 2),
                ("add", "n1", -2, "ok", None, 3), ("read", "n0", None, "ok", -1, 4),
                ("final-read", "n0", None, "ok", 1, 9))
    # 4 > 3 (the only add so far); -1 < -2 + 0 is possible (the -2 without the 3)
    assert counter("pn-counter", h) == [("impossible read", [1])]
    h.ops[3].result = -3
    assert counter("pn-counter", h) == [("impossible read", [1]), ("impossible read", [3])]


def test_duplicated_id_breaks_integrity(tmp_path):
    h = history(("generate", "n0", None, "ok", "a", 1), ("generate", "n1", None, "ok", 7, 2),
                ("generate", "n2", None, "ok", "7", 3), ("generate", "n2", None, "info", None, 4))
    w = WORKLOADS["unique-ids"](None)
    path = tmp_path / "t.jsonl"
    joins = [{"trace": "t", "process": n, "kind": "join", "time": 0.0}
             for n in ("n0", "n1", "n2")]
    tomkit.write(path, joins + [{"trace": "t", **r} for r in w.records(h)])
    assert str(tomkit.check(path, properties=["integrity"]).outcomes[0].verdicts[
        "integrity"]) == "holds"  # 7 and "7" are two ids
    h.ops[2].result = 7
    tomkit.write(path, joins + [{"trace": "t", **r} for r in w.records(h)])
    res = tomkit.check(path, properties=["integrity"]).outcomes[0]
    assert str(res.verdicts["integrity"]) == "violated"
    assert "sent twice" in res.results["integrity"].explanation


# ---- end to end ------------------------------------------------------------------------


def config(tmp_path, workload, argv, **kw):
    base = dict(node_count=3, time_limit=2.5, rate=40.0, timeout=1.0, recovery=1.0,
                init_timeout=60.0, seed=1)
    base.update(kw)
    return RunConfig(workload=workload, bin=argv, out=tmp_path / "run", **base)


@pytest.mark.parametrize("workload, node, nemesis", [
    ("unique-ids", "unique_ids", "partition,kill"),
    # gossip acknowledges an add before it spread: a node killed (no disk) right after
    # loses it, as in Maelstrom; the tutorial's g-set runs under partitions
    ("g-set", "g_set", "partition,pause"),
    ("g-counter", "g_counter", "partition,kill,pause"),  # its state is in seq-kv
    ("pn-counter", "pn_counter", "partition,pause"),
    ("g-counter", "pn_counter", "partition"),  # a pn-counter is a g-counter too
])
def test_correct_node_is_valid_under_faults(tmp_path, workload, node, nemesis):
    res = run(config(tmp_path, workload, shipped(node), nemesis=frozenset(nemesis.split(",")),
                     nemesis_interval=0.6, latency=2.0, latency_dist="exponential"))
    assert res.valid, ([a.to_dict() for a in res.anomalies], res.faults, res.verdicts,
                       res.nemesis)
    assert res.stats["ok"] > 0 and res.nemesis
    assert set(res.verdicts) == set(WORKLOADS[workload].properties)


@pytest.mark.parametrize("workload, node, arg, caught", [
    ("unique-ids", "unique_ids", "counter", "integrity"),
    ("g-set", "g_set", "local", "lost"),
    ("g-counter", "g_counter", "trusting", "final read outside the acceptable set"),
    ("pn-counter", "pn_counter", "max-merge", "final read outside the acceptable set"),
])
def test_broken_node_is_caught(tmp_path, workload, node, arg, caught):
    # two clients per node, so that every node takes adds (or generates) concurrently
    res = run(config(tmp_path, workload, shipped(node, arg), concurrency=6))
    assert not res.valid
    found = {a.name for a in res.anomalies} | {p for p, v in res.verdicts.items()
                                                if v == "violated"}
    assert caught in found, (found, res.stats)
    if workload == "g-counter":
        assert res.stats["seq_kv_stale_reads"] > 0  # the reads it trusted


def test_tutorial_command_line(tmp_path):
    """Gossip Glomers' challenge #2 as its page writes it, with ./maelstrom test
    replaced by tomkit run (a shorter time limit and a lower rate, for a test)."""
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "tomkit", "run", "-w", "unique-ids", "--bin",
           sys.executable, str(shipped("unique_ids")[1]), "--time-limit", "3",
           "--rate", "100", "--node-count", "3", "--availability", "total",
           "--nemesis", "partition", "--nemesis-interval", "1", "--seed", "4",
           "--log-stderr", "--out", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "integrity            HOLDS" in p.stdout and "verdict: valid" in p.stdout
    assert "n2 | n2 generates ids n2-" in p.stderr  # --log-stderr
    assert "generates ids" in (out / "nodes" / "n2.log").read_text()
    bad = subprocess.run(cmd[:-2] + ["--out", str(tmp_path / "bad"), "--availability",
                                     "2"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--availability" in bad.stderr
