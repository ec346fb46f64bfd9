"""The single pass's tests' oracle: the whole-trace checker's report on the same files,
compared exactly (verdicts, witnesses, sentences, counts, exit code); and the layouts and
merges the tests feed it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import strategies as st

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.reduced as reduced
import tomkit.checker.stream.spill as spill
from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options, properties, with_scope
from tomkit.checker.stream.driver import check_stream

#: every property the single pass decides, and their correct-process forms
STREAMED = [p for p in properties().values() if p.stream]
CORRECT = [with_scope(p, "correct") for p in STREAMED if p.scoped]


def outcomes(report) -> dict:
    return {o.trace: ({k: str(v) for k, v in o.verdicts.items()},
                      {k: r.to_dict() for k, r in o.results.items()}, o.events)
            for o in report.outcomes}


def agree(paths, props=STREAMED, options=Options(), run=None) -> None:
    """The single pass's report on ``paths`` is the whole-trace checker's."""
    whole = check_paths(paths, props, options)
    single = check_stream(paths, props, options, run=run)
    assert outcomes(single) == outcomes(whole)
    assert {k: dict(v) for k, v in single.counts.items()} == \
        {k: dict(v) for k, v in whole.counts.items()}
    assert single.exit_code() == whole.exit_code()


@contextmanager
def small_windows(trim: int, rows: int, spill_rows: int | None = None) -> Iterator[None]:
    """The single pass with a window of ``trim`` positions, reading ``rows`` records at a
    time and spilling held records past ``spill_rows`` (left as it is when None), put
    back on leaving: for Hypothesis bodies, whose examples share one test's monkeypatch,
    which would put the sizes back only after the last example."""
    saved = canon.TRIM_AT, driver.READ_ROWS, spill.SPILL_ROWS
    canon.TRIM_AT, driver.READ_ROWS = trim, rows
    if spill_rows is not None:
        spill.SPILL_ROWS = spill_rows
    try:
        yield
    finally:
        canon.TRIM_AT, driver.READ_ROWS, spill.SPILL_ROWS = saved


def by_process(records: list[dict]) -> list[dict]:
    return sorted(records, key=lambda r: r["process"])  # stable: local orders kept


def merge(draw, local: dict[str, list[dict]]) -> list[dict]:
    """A random merge of the processes' records (Hypothesis's ``draw``) keeping each
    process's own order, each record of trace "t"."""
    procs = list(local)
    out, heads = [], {p: 0 for p in procs}
    while any(heads[p] < len(local[p]) for p in procs):
        p = draw(st.sampled_from([p for p in procs if heads[p] < len(local[p])]))
        out.append(dict(local[p][heads[p]], trace="t"))
        heads[p] += 1
    return out



def records_read(monkeypatch, what=lambda pieces: sum(p.table.num_rows for p in pieces)) -> list:
    """What each exact check on held records reads, as it is read (``what`` of its pieces:
    by default the number of records), one item a check."""
    read: list = []
    decide = reduced.decide_chunk

    def counted(pieces, *a, **k):
        read.append(what(pieces))
        return decide(pieces, *a, **k)

    monkeypatch.setattr(reduced, "decide_chunk", counted)
    return read


def without_silent_processes(decide):
    """narrow.py's ``decide`` with the tail's summary read on the tail's own processes
    only (a process silent in the tail left out): what the silent-process tests show
    the cut's report would be, were it not counted."""
    def waived(tail, props, options, processes, on_m, delivered, sent, last=None):
        names = list(tail.procs)
        on_t = {names[i] for i in range(len(names)) if tail.seen[i]}
        return decide(tail, props, options, on_t, on_t, delivered, sent, last)

    return waived

