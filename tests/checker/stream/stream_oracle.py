"""The single pass's tests' oracle: the whole-trace checker's report on the same files,
compared exactly (verdicts, witnesses, sentences, counts, exit code); and the layouts and
merges the tests feed it."""

from __future__ import annotations

from hypothesis import strategies as st

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

