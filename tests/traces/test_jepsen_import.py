"""Jepsen and Maelstrom histories (EDN, JSON) into traces, judged by tomkit check:
clean kafka and list-append histories hold, each planted anomaly is found, and bad
lines are errors naming file, line and field."""

import json
import subprocess
import sys

import pytest

import tomkit
from tomkit.traces.errors import TraceFormatError
from tomkit.traces.jepsen import import_history

KAFKA_CLEAN = """
{:index 0, :time 1000, :type :invoke, :process 0, :f :send, :value [[:send "k" 10]]}
{:index 1, :time 2000, :type :ok, :process 0, :f :send, :value [[:send "k" [0 10]]]}
{:index 2, :time 2100, :type :info, :process :nemesis, :f :start-partition, :value nil}
{:index 3, :time 3000, :type :invoke, :process 1, :f :send, :value [[:send "k" 11]]}
{:index 4, :time 4000, :type :ok, :process 1, :f :send, :value [[:send "k" [2 11]]]}
{:index 5, :time 5000, :type :invoke, :process 2, :f :poll, :value [[:poll]]}
{:index 6, :time 6000, :type :ok, :process 2, :f :poll, :value [[:poll {"k" [[0 10] [2 11]]}]]}
{:index 7, :time 7000, :type :invoke, :process 2, :f :assign, :value ["k"]}
{:index 8, :time 8000, :type :ok, :process 2, :f :assign, :value ["k"]}
{:index 9, :time 9000, :type :invoke, :process 2, :f :poll, :value [[:poll]]}
{:index 10, :time 9500, :type :ok, :process 2, :f :poll, :value [[:poll {"k" [[2 11]]}]]}
{:index 11, :time 9600, :type :invoke, :process 3, :f :debug-topic-partitions, :value nil}
{:index 12, :time 9700, :type :ok, :process 3, :f :debug-topic-partitions, :value nil}
"""


def write(tmp_path, text, name="history.edn"):
    p = tmp_path / name
    p.write_text(text.strip() + "\n")
    return p


def judged(tmp_path, records, props):
    out = tmp_path / "t.jsonl"
    tomkit.write(out, records)
    report = tomkit.check(out, properties=props)
    verdicts = {}
    for o in report.outcomes:
        for n, v in o.verdicts.items():
            verdicts[n] = max(verdicts.get(n, v), v)
    return {n: str(v) for n, v in verdicts.items()}, report


def test_clean_kafka_history(tmp_path):
    records, stats = import_history(write(tmp_path, KAFKA_CLEAN))
    assert stats.workload == "kafka" and stats.nemesis == 1
    assert stats.other == {"debug-topic-partitions": 1}
    assert {r["process"] for r in records} == {"p0", "p1", "p2", "p2~2"}
    assert all(r["trace"] == "history/k" for r in records)
    verdicts, _ = judged(tmp_path, records, ["integrity", "log-offsets"])
    assert verdicts == {"integrity": "holds", "log-offsets": "holds"}


@pytest.mark.parametrize("edit, clause", [
    # another node gave offset 0 to another message
    (('[[:send "k" [2 11]]]', '[[:send "k" [0 11]]]'), "inconsistent-offsets"),
    # the poll jumps over offset 2 (skip); after the assign, the repeat is legal
    (('[[:poll {"k" [[0 10] [2 11]]}]]', '[[:poll {"k" [[0 10]]}]]'), None),
])
def test_planted_kafka_anomalies(tmp_path, edit, clause):
    text = KAFKA_CLEAN.replace(*edit)
    verdicts, report = judged(tmp_path, import_history(write(tmp_path, text))[0],
                              ["log-offsets"])
    if clause is None:
        assert verdicts["log-offsets"] == "holds"  # a later reader run polled offset 2
        return
    assert verdicts["log-offsets"] == "violated"
    res = report.outcomes[0].results["log-offsets"]
    assert res.clause == clause


def test_kafka_skip_and_lost_write(tmp_path):
    text = KAFKA_CLEAN.replace('[[:poll {"k" [[0 10] [2 11]]}]]', '[[:poll {"k" [[0 10]]}]]')
    text = text.replace('[[:poll {"k" [[2 11]]}]]', '[[:poll {"k" [[3 12]]}]]')
    text += ('{:index 13, :time 9800, :type :invoke, :process 4, :f :send, '
             ':value [[:send "k" 12]]}\n'
             '{:index 14, :time 9900, :type :ok, :process 4, :f :send, '
             ':value [[:send "k" [3 12]]]}\n')
    _, report = judged(tmp_path, import_history(write(tmp_path, text))[0], ["log-offsets"])
    res = report.outcomes[0].results["log-offsets"]
    assert res.clause == "lost-write" and "11, acknowledged at offset 2" in res.explanation
    skip = KAFKA_CLEAN.replace(
        '{:index 7,', '{:index 6.5, :type :invoke, :process 2, :f :poll, :value [[:poll]]}\n'
        '{:index 6.6, :type :ok, :process 2, :f :poll, :value [[:poll {"k" [[0 10]]}]]}\n'
        '{:index 7,')
    _, report = judged(tmp_path, import_history(write(tmp_path, skip))[0], ["log-offsets"])
    assert report.outcomes[0].results["log-offsets"].clause == "nonmonotonic"


LIST_APPEND = """
{:type :invoke, :process 0, :f :txn, :value [[:append 5 1] [:r 5 nil]], :index 0}
{:type :ok, :process 0, :f :txn, :value [[:append 5 1] [:r 5 [1]]], :index 1}
{:type :invoke, :process 1, :f :txn, :value [[:append 5 2]], :index 2}
{:type :ok, :process 1, :f :txn, :value [[:append 5 2]], :index 3}
{:type :invoke, :process 2, :f :txn, :value [[:r 5 nil] [:append 6 1]], :index 4}
{:type :ok, :process 2, :f :txn, :value [[:r 5 [1 2]] [:append 6 1]], :index 5}
{:type :invoke, :process 0, :f :txn, :value [[:r 5 nil] [:r 6 nil]], :index 6}
{:type :ok, :process 0, :f :txn, :value [[:r 5 [1 2]] [:r 6 nil]], :index 7}
"""


def test_list_append_clean_and_incompatible_order(tmp_path):
    props = ["integrity", "prefix-order", "log-offsets"]
    records, stats = import_history(write(tmp_path, LIST_APPEND))
    assert stats.workload == "list-append" and stats.keys == 2
    # key 6 is never read: no offsets, so log-offsets is unknown there, not violated
    assert judged(tmp_path, records, props)[0] == {"integrity": "holds",
                                                   "prefix-order": "holds",
                                                   "log-offsets": "unknown"}
    bad = LIST_APPEND.replace("[[:r 5 [1 2]] [:r 6 nil]]", "[[:r 5 [2 1]] [:r 6 nil]]")
    verdicts, _ = judged(tmp_path, import_history(write(tmp_path, bad))[0], props)
    assert verdicts["prefix-order"] == "violated" and verdicts["log-offsets"] == "violated"
    garbage = LIST_APPEND.replace("[[:r 5 [1 2]] [:append 6 1]]", "[[:r 5 [1 2 9]] "
                                  "[:append 6 1]]")
    verdicts, _ = judged(tmp_path, import_history(write(tmp_path, garbage))[0], props)
    assert verdicts["integrity"] == "violated"


def test_json_history_and_the_command(tmp_path):
    ops = [{"type": "invoke", "process": 0, "f": "send", "value": [["send", "a", 1]]},
           {"type": "ok", "process": 0, "f": "send", "value": [["send", "a", [0, 1]]]},
           {"type": "invoke", "process": 1, "f": "send", "value": [["send", "a", 2]]},
           {"type": "ok", "process": 1, "f": "send", "value": [["send", "a", [0, 2]]]}]
    path = tmp_path / "h.json"
    path.write_text(json.dumps(ops))
    out = tmp_path / "t.jsonl"
    run = subprocess.run([sys.executable, "-m", "tomkit", "import", "--format", "jepsen",
                          str(path), "--out", str(out)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert "kafka history, 2 client operations" in run.stdout
    chk = subprocess.run([sys.executable, "-m", "tomkit", "check", str(out), "-p",
                          "log-offsets", "-q"], capture_output=True, text=True, timeout=120)
    assert chk.returncode == 1 and "offset 0 holds 1 for p0 and 2 for p1" in chk.stdout


@pytest.mark.parametrize("line, problem, field", [
    ("{:type :ok, :process 0, :f :send", "not EDN", None),
    ("[1 2]", "an operation is a map", None),
    ("{:type :ok, :f :send}", "without process", "process"),
    ("{:type :done, :process 0, :f :send}", "type 'done'", "type"),
    ("{:type :ok, :process 0, :f :send, :value nil}", "never invoked", "process"),
])
def test_bad_lines_name_file_line_and_field(tmp_path, line, problem, field):
    path = write(tmp_path, KAFKA_CLEAN.strip().split("\n")[0] + "\n" + line.replace(
        ":process 0", ":process 7"))
    with pytest.raises(TraceFormatError) as e:
        import_history(path)
    assert problem in str(e.value) and "history.edn" in str(e.value)
    assert e.value.location.line == 2
    if field:
        assert e.value.field == field
