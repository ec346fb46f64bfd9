"""The kafka workload: the committed-offsets check on planted histories, and end to end
the kafka example nodes (correct on lin-kv; broken on seq-kv, and single-node logic on
three nodes)."""

from maelstrom_nodes import shipped

from tomkit.maelstrom.client import Op
from tomkit.maelstrom.harness import RunConfig, run
from tomkit.maelstrom.workloads.kafka import committed_going_back


def op(i, f, result, t0, t1, client=0):
    return Op(i, client, "n0", f, None, t0, type="ok", done_time=t1, result=result,
              replied_by="n0")


def test_committed_offsets_clean():
    ops = [op(0, "commit_offsets", {"a": 3}, 0.0, 1.0),
           op(1, "list_committed_offsets", {"a": 3}, 1.5, 2.0),
           op(2, "commit_offsets", {"a": 5}, 2.5, 3.0),
           op(3, "list_committed_offsets", {"a": 3}, 2.6, 2.9),  # concurrent with it: fine
           op(4, "list_committed_offsets", {"a": 7, "b": 1}, 3.5, 4.0)]
    assert committed_going_back(ops) == []


def test_committed_offsets_going_back_after_a_commit():
    ops = [op(0, "commit_offsets", {"a": 3}, 0.0, 1.0),
           op(1, "list_committed_offsets", {"a": 2}, 1.5, 2.0, client=1)]
    (a,) = committed_going_back(ops)
    assert a.name == "committed offsets going back" and a.ops == [0, 1]
    assert "gives key a offset 2, but offset 3 was committed" in a.text


def test_committed_offsets_going_back_after_a_list_or_missing():
    ops = [op(0, "list_committed_offsets", {"a": 4}, 0.0, 1.0),
           op(1, "list_committed_offsets", {}, 1.5, 2.0, client=1)]
    (a,) = committed_going_back(ops)
    assert "gives key a nothing, but offset 4" in a.text


def config(tmp_path, argv, **kw):
    base = dict(workload="kafka", node_count=3, concurrency=6, time_limit=3.0, rate=100.0,
                timeout=1.0, recovery=0.5, init_timeout=60.0, seed=3)
    base.update(kw)
    return RunConfig(bin=argv, out=tmp_path / "run", **base)


def test_kafka_on_lin_kv_is_valid(tmp_path):
    res = run(config(tmp_path, shipped("kafka_kv", "lin-kv")))
    assert res.valid, res.to_dict()
    assert res.verdicts == {"integrity": "holds", "log-offsets": "holds"}
    assert res.stats["service_requests"]["lin-kv"] > 0
    # every poll invoked after the first acknowledged send, from an offset at or below
    # it, returns that key's messages (lin-kv is linearizable); how many such polls there
    # are, a loaded machine decides
    hist = run_history(tmp_path)
    done = {e["index"] // 2: e for e in hist if e["type"] != "invoke"}
    acks = [(done[e["index"] // 2]["time"], *done[e["index"] // 2]["value"]) for e in hist
            if e["type"] == "invoke" and e["f"] == "send"
            and done.get(e["index"] // 2, {}).get("type") == "ok"]
    assert acks
    t, key, offset = min(acks)
    for e in hist:
        d = done.get(e["index"] // 2)
        if (e["type"] == "invoke" and e["f"] == "poll" and e["time"] > t and d
                and d["type"] == "ok" and e["value"].get(key, 0) <= offset):
            assert d["value"].get(key), (e, d)


def run_history(tmp_path):
    import json

    return [json.loads(line) for line in (tmp_path / "run/history.jsonl").read_text().splitlines()]


def test_kafka_trusting_seq_kv_lists_committed_offsets_that_go_back(tmp_path):
    res = run(config(tmp_path, shipped("kafka_kv", "seq-kv"), time_limit=4.0, rate=150.0))
    assert not res.valid
    assert res.stats["seq_kv_stale_reads"] > 0
    assert any(a.name == "committed offsets going back" for a in res.anomalies)
    assert res.verdicts["log-offsets"] == "holds"  # its logs are right: cas sees the latest


def test_single_node_kafka_on_three_nodes_has_inconsistent_offsets(tmp_path):
    res = run(config(tmp_path, shipped("kafka_local")))
    assert not res.valid
    assert res.verdicts["log-offsets"] == "violated"
    assert "offset" in res.explanations["log-offsets"]
    one = run(config(tmp_path, shipped("kafka_local"), node_count=1, concurrency=3))
    assert one.valid, one.to_dict()


def test_the_run_history_imports_into_the_same_verdict(tmp_path):
    """history.jsonl, read back by tomkit import --format jepsen, is judged as the run."""
    import tomkit
    from tomkit.traces.jepsen import import_history

    res = run(config(tmp_path, shipped("kafka_local")))
    records, stats = import_history(tmp_path / "run" / "history.jsonl")
    assert stats.workload == "kafka" and stats.ops == res.stats["ops"]
    out = tmp_path / "imported.jsonl"
    tomkit.write(out, records)
    report = tomkit.check(out, properties=["integrity", "log-offsets"])
    got = {n: str(max(o.verdicts[n] for o in report.outcomes))
           for n in ("integrity", "log-offsets")}
    assert got == res.verdicts
