"""log-offsets: each kind of violation planted, clean logs (sparse offsets, readers that
start late), and both engines agreeing through the file path."""

import pytest

import tomkit
from tomkit.checker.properties import properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace

PROP = properties()["log-offsets"]


def recs(*rows):
    """(process, kind, msg, offset) rows of one trace; offset None: no x_offset."""
    out = []
    for p, kind, msg, off in rows:
        r = {"trace": "k", "process": p, "kind": kind, "msg": msg}
        if off is not None:
            r["x_offset"] = off
        out.append(r)
    return out


def both(tmp_path, records):
    """The reference verdict, after the file path (chunk engine, then exact) agrees."""
    res = PROP.check(Trace.from_records(records, "t.jsonl"))
    path = tmp_path / "t.jsonl"
    tomkit.write(path, records)
    report = tomkit.check(path, properties=["log-offsets"])
    assert report.outcomes[0].verdicts["log-offsets"] == res.verdict
    return res


CLEAN = recs(
    ("w", "send", "a", 0), ("w", "send", "b", 1), ("w", "send", "c", 3),  # sparse: no 2
    ("r1", "deliver", "a", 0), ("r1", "deliver", "b", 1), ("r1", "deliver", "c", 3),
    ("r2", "deliver", "b", 1), ("r2", "deliver", "c", 3),  # started at 1 (assigned)
    ("w", "send", "d", None),  # not acknowledged: no offset, never polled
)


def test_clean_log_holds(tmp_path):
    assert both(tmp_path, CLEAN).verdict == Verdict.HOLDS


def test_unknown_without_offsets(tmp_path):
    res = both(tmp_path, recs(("p", "send", "a", None), ("q", "deliver", "a", None)))
    assert res.verdict == Verdict.UNKNOWN and "x_offset" in res.explanation


@pytest.mark.parametrize("rows, clause, words", [
    # two writers given offset 0 by two nodes that each kept their own log
    ([("w1", "send", "a", 0), ("w2", "send", "b", 0)], "inconsistent-offsets",
     "offset 0 holds a for w1 and b for w2"),
    ([("w", "send", "a", 0), ("r", "deliver", "a", 1)], "inconsistent-offsets",
     "a is at offset 1 for r and at offset 0 for w"),
    ([("w", "send", "a", 0), ("w", "send", "b", 1), ("r", "deliver", "a", 0),
      ("r", "deliver", "b", 1), ("r", "deliver", "a", 0)], "nonmonotonic",
     "r polls offset 1 and then offset 0"),
    ([("w", "send", "a", 4), ("r", "deliver", "a", 4), ("r", "deliver", "a", 4)],
     "nonmonotonic", "offset 4 and then offset 4"),
    ([("w", "send", "a", 0), ("w", "send", "b", 1), ("w", "send", "c", 2),
      ("r", "deliver", "a", 0), ("r", "deliver", "c", 2), ("q", "deliver", "b", 1)],
     "skip", "skipping offset 1 (b)"),
    ([("w", "send", "a", 0), ("w", "send", "b", 1), ("r", "deliver", "b", 1)],
     "lost-write", "a, acknowledged at offset 0, is never polled"),
])
def test_planted_violations(tmp_path, rows, clause, words):
    res = both(tmp_path, recs(*rows))
    assert res.verdict == Verdict.VIOLATED
    assert res.clause == clause
    assert words in res.explanation
    assert res.witness and all(w.location is not None for w in res.witness)


def test_witness_of_a_skip_names_the_record_that_knows_the_offset(tmp_path):
    res = both(tmp_path, recs(("w", "send", "b", 1), ("r", "deliver", "a", 0),
                              ("r", "deliver", "c", 2), ("w", "send", "a", 0),
                              ("w", "send", "c", 2)))
    assert res.clause == "skip"
    assert [w.describe().split("  [")[0] for w in res.witness] == [
        "r: deliver a #0", "r: deliver c #1", "w: send b #0"]
