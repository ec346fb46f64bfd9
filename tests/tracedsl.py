"""A compact notation for hand-written traces, and a harness running both engines.

    p send a deps=b,c time=1.5
    q deliver a
    q view v1 members=p,q
    p crash

One line per record, in record order; ``trace=`` overrides the trace id.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tomkit.checker.chunk import Chunk, Piece
from tomkit.checker.properties import (
    EXACT,
    HOLDS,
    UNKNOWN,
    VIOLATED,
    Options,
    properties,
    resolve,
)
from tomkit.checker.result import Result, Verdict
from tomkit.checker.trace import Trace
from tomkit.traces.schema import ARROW_SCHEMA

CODE = {HOLDS: Verdict.HOLDS, UNKNOWN: Verdict.UNKNOWN, VIOLATED: Verdict.VIOLATED}


def parse(text: str, trace: str = "t") -> list[dict]:
    out = []
    for line in text.strip().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        words = line.split()
        rec: dict = {"trace": trace, "process": words[0], "kind": words[1]}
        rest = words[2:]
        if rec["kind"] in ("send", "recv", "deliver"):
            rec["msg"] = rest.pop(0)
        elif rec["kind"] == "view":
            rec["view"] = rest.pop(0)
        for kv in rest:
            k, v = kv.split("=", 1)
            if k in ("deps", "members"):
                rec[k] = [x for x in v.split(",") if x]
            elif k == "time":
                rec[k] = float(v)
            elif k == "seq":
                rec[k] = int(v)
            else:
                rec[k] = v
        if rec["kind"] == "view" and "members" not in rec:
            rec["members"] = []
        out.append(rec)
    return out


def table(records: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(records, schema=ARROW_SCHEMA)


def chunk_of(records: list[dict], source: str = "test.jsonl") -> Chunk:
    piece = Piece(table(records), np.arange(1, len(records) + 1), source, "jsonl")
    return Chunk.build([piece])


def check(records: list[dict], name: str, options: Options = Options()) -> Result:
    """The reference verdict of one property on a one-trace record list, after asserting that
    the vectorized engine agrees with it."""
    return check_all(records, [name], options)[name]


def check_all(records: list[dict], names: list[str],
              options: Options = Options()) -> dict[str, Result]:
    """:func:`check` of each property in ``names``, the trace and its chunk built once and
    shared by the properties, as the engine shares them."""
    trace = Trace.from_records(records, source="test.jsonl")
    c = chunk_of(records)
    assert c.ntr == 1
    view = c.trace(0)  # the chunk's own exact view
    out = {}
    for name in names:
        prop = resolve(name)
        res = prop.check(trace, options)
        code = int(prop.detect(c, options)[0])
        if code != EXACT:
            assert CODE[code] == res.verdict, (name, CODE[code], res)
        # the chunk's exact view gives the same verdict and witness
        again = prop.check(view, options)
        assert again.verdict == res.verdict
        assert [w.describe() for w in again.witness] == [w.describe() for w in res.witness]
        out[name] = res
    return out


def detect_all(records: list[dict], options: Options = Options()) -> dict[str, dict[str, int]]:
    """Per property, per trace id: the vectorized code."""
    c = chunk_of(records)
    out = {}
    for name, prop in properties().items():
        codes = prop.detect(c, options)
        out[name] = {c.trace_names[i]: int(codes[i]) for i in range(c.ntr)}
    return out
