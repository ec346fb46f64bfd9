"""A mutation fuzzer of the trace readers and the checker: every input gets a verdict or
a clear error, in bounded time, and every record is accounted for.

Seeds are valid traces written by tomkit's own writers (``traces/generate.py``: clean
and faulty executions, with and without views and crashes) in the three formats: JSON
Lines, gzip'd JSON Lines and Parquet. Each input is one seed with a few mutations:

* bytes: flip, set to a random byte, insert, delete, truncate, duplicate a span;
* lines (JSON Lines): drop, duplicate, swap, or replace a field's value by a hostile
  one (thousands of digits, thousands of nested brackets, invalid UTF-8, NaN, a huge
  or negative number, a wrong type, a duplicate key);
* gzip: damage the compressed stream, or append a second member (good or damaged);
* Parquet: damage the footer or the column pages, or give columns (core or ``x_``)
  another Arrow type, of every kind Arrow has, nested and dictionary-encoded
  (:mod:`.parquet_schemas`).

Each input is checked by ``tomkit check``'s engine in a worker process (a segmentation
fault kills the worker, not the fuzzer), once stopping at the first bad record and once
with ``keep_going``. An outcome is one of:

``verdict``   a report (exit 0 or 1);
``error``     a :class:`~tomkit.traces.errors.TraceFormatError` naming its file;
``crash``     any other exception, or the worker died;
``hang``      no answer within ``timeout`` seconds;
``accounting`` with keep_going, accepted + rejected is not the number of records in
              the input (JSON Lines: its non-blank lines, less a header; Parquet: the
              rows its footer declares, when the footer reads).

Crashes, hangs and accounting errors are failures; their inputs are written to
``--out`` with the traceback. ``make fuzz`` runs it for minutes; tests/fuzz/test_fuzz_inputs.py
runs a small seeded slice.

    python -m tomkit.fuzz.inputs [--inputs N] [--seconds S] [--seed S] [--out DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, TimeoutError, wait
from dataclasses import dataclass

import numpy as np
from pebble import ProcessExpired, ProcessPool

from .parquet_schemas import retype_parquet

__all__ = ["FAILURES", "Outcome", "fuzz", "mutate", "run_one", "seeds"]

FAILURES = ("crash", "hang", "accounting")

HOSTILE: tuple[str, ...] = (
    "9" * 5000, "-" + "9" * 40, "1e400", "NaN", "-Infinity", "[" * 3000 + "]" * 3000,
    '{"a":' * 2000 + "1" + "}" * 2000, '"\\ud800"', "null", "[]", "{}", '""', "true",
    '"' + "x" * 100_000 + '"', "18446744073709551616", "-1", "0.5", '["a", 1]',
)


def seeds(seed: int = 0) -> list[tuple[str, bytes]]:
    """(suffix, bytes) of valid files: a few traces each, in every format."""
    from tomkit.traces.generate import FAULTS, clean_trace, faulty_trace
    from tomkit.traces.writer import write_records

    recs: list[list[dict]] = [
        clean_trace("c0", n_processes=3, n_messages=6, seed=[seed, 0]),
        clean_trace("c1", n_processes=4, n_messages=5, seed=[seed, 1], views=True,
                    crash=True),
    ]
    for k, fault in enumerate(sorted(FAULTS)):
        try:
            recs.append(faulty_trace(f"f{k}", fault, n_processes=4, n_messages=6,
                                     seed=[seed, k], views=k % 2 == 0)[0])
        except ValueError:
            continue
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(0, len(recs), 3):
            flat = [r for rs in recs[i:i + 3] for r in rs]
            for suffix in (".jsonl", ".jsonl.gz", ".parquet"):
                path = os.path.join(tmp, f"s{i}{suffix}")
                write_records(path, flat, grouped=(i // 3) % 2 == 0)
                with open(path, "rb") as f:
                    out.append((suffix, f.read()))
    return out


def _bytes(rng: np.random.Generator, data: bytearray) -> None:
    if not data:
        data.extend(b"{")
        return
    op = rng.integers(6)
    at = int(rng.integers(len(data)))
    if op == 0:
        data[at] ^= 1 << int(rng.integers(8))
    elif op == 1:
        data[at] = int(rng.integers(256))
    elif op == 2:
        data[at:at] = bytes(rng.integers(0, 256, int(rng.integers(1, 8)), dtype=np.uint8))
    elif op == 3:
        del data[at:at + int(rng.integers(1, 16))]
    elif op == 4:
        del data[at:]
    else:
        n = int(rng.integers(1, 64))
        data[at:at] = data[at:at + n]


def _lines(rng: np.random.Generator, data: bytes) -> bytes:
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data
    i = int(rng.integers(len(lines) - 1))
    op = rng.integers(5)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[i])
    elif op == 2:
        j = int(rng.integers(len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 3:
        try:
            obj = json.loads(lines[i])
        except (ValueError, RecursionError):
            return data
        if isinstance(obj, dict) and obj:
            keys = [*obj, "x_f", "seq", "time", "deps", "members", "view"]
            key = keys[int(rng.integers(len(keys)))]
            value = HOSTILE[int(rng.integers(len(HOSTILE)))]
            body = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in obj.items()
                             if k != key)
            lines[i] = ("{" + body + (", " if body else "") + f"{json.dumps(key)}: "
                        + value + "}").encode()
    else:
        lines[i] = lines[i] + b', "trace": "dup"}' if lines[i].endswith(b"}") else lines[i]
    return b"\n".join(lines)


def mutate(rng: np.random.Generator, suffix: str, data: bytes) -> bytes:
    """One input: ``data`` (a file of format ``suffix``) with one to three mutations."""
    if suffix == ".parquet" and rng.random() < 0.25:
        # first, on the valid seed: reading a damaged file whole (as the retyping does)
        # can kill the process in Arrow, and the retyping runs in the fuzzer's own
        data = retype_parquet(rng, data)
    for _ in range(int(rng.integers(1, 4))):
        kind = rng.integers(3)
        if suffix == ".jsonl.gz":
            if kind == 0:
                plain = gzip.decompress(data) if _inflates(data) else data
                data = gzip.compress(_lines(rng, plain), mtime=0)
            elif kind == 1:
                second = bytearray(gzip.compress(b'{"trace":"z","process":"p","kind":"send",'
                                                 b'"msg":"z"}\n', mtime=0))
                if rng.integers(2):
                    second[-8] ^= 0xFF  # the member fails its checksum
                data = data + bytes(second)
            else:
                b = bytearray(data)
                _bytes(rng, b)
                data = bytes(b)
        elif suffix == ".jsonl" and kind < 2:
            data = _lines(rng, data)
        else:
            b = bytearray(data)
            if suffix == ".parquet" and kind == 0 and len(b) > 16:
                # the footer (metadata) is the last few hundred bytes
                at = max(0, len(b) - int(rng.integers(8, min(len(b), 2000))))
                b[at] ^= 1 << int(rng.integers(8))
            else:
                _bytes(rng, b)
            data = bytes(b)
    return data


def _inflates(data: bytes) -> bool:
    try:
        gzip.decompress(data)
        return True
    except (OSError, EOFError, ValueError, zlib.error):
        return False


def _records_in(path: str, suffix: str) -> int | None:
    """How many records the input holds, where that can be told without the reader."""
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq

            md = pq.ParquetFile(path).metadata
            # the rows are in the row groups (a damaged file total may disagree)
            return sum(md.row_group(i).num_rows for i in range(md.num_row_groups))
        except Exception:  # noqa: BLE001 - an unreadable footer: nothing to count
            return None
    with open(path, "rb") as f:
        raw = f.read()
    if suffix == ".jsonl.gz":
        try:
            raw = gzip.decompress(raw)
        except Exception:  # noqa: BLE001 - damaged: the count is not known
            return None
    # blank as the reader's is_blank: a line of NUL bytes is a record, rejected
    lines = [x for x in raw.split(b"\n") if x.strip(b" \t\r")]
    if lines:
        try:  # a header that reads as one is not a record; a damaged one is rejected
            head = json.loads(lines[0].lstrip(b"\xef\xbb\xbf"))
        except (ValueError, RecursionError):
            head = None
        if isinstance(head, dict) and "format" in head:
            lines = lines[1:]
    return len(lines)


@dataclass
class Outcome:
    kind: str  # verdict | error | crash | hang | accounting
    detail: str = ""


def run_one(path: str, suffix: str) -> list[Outcome]:
    """Check one input twice (stop at the first bad record; keep going): its outcomes."""
    from tomkit.checker.engine import check_paths, select
    from tomkit.checker.properties import Options, properties
    from tomkit.traces.errors import TraceFormatError

    props = select([n for n in properties() if n != "latency"], Options())
    out: list[Outcome] = []
    clean = None
    for keep_going in (False, True):
        if keep_going and clean is not None:
            # the first run read every record and rejected none, so keep_going changes
            # nothing the run does (it acts on bad records only): its report stands for
            # both, and its count is checked (the second run of a clean input, saved)
            out.append(_accounted(clean, path, suffix))
            continue
        try:
            rep = check_paths([path], props, Options(), keep_going=keep_going, workers=1)
        except TraceFormatError as e:
            ok = str(e).startswith(path)
            out.append(Outcome("error" if ok else "crash",
                               "" if ok else f"error without its file: {e}"))
            continue
        except Exception:  # noqa: BLE001 - the point: any other exception is a crash
            out.append(Outcome("crash", traceback.format_exc()))
            continue
        if not keep_going:
            clean = rep if rep.n_rejected == 0 else None
            out.append(Outcome("verdict"))
        else:
            out.append(_accounted(rep, path, suffix))
    return out


def _accounted(rep, path: str, suffix: str) -> Outcome:
    """A verdict whose records are all accounted for (accepted or rejected), or the
    accounting error."""
    want = _records_in(path, suffix)
    got = rep.n_accepted + rep.n_rejected
    if want is not None and got != want:
        return Outcome("accounting", f"{got} accounted for, {want} in the input")
    return Outcome("verdict")


def _task(data: bytes, suffix: str, workdir: str) -> list[Outcome]:
    path = os.path.join(workdir, f"input-{os.getpid()}{suffix}")
    with open(path, "wb") as f:
        f.write(data)
    try:
        return run_one(path, suffix)
    finally:
        os.unlink(path)


def inputs(seed: int) -> Iterator[tuple[str, bytes]]:
    rng = np.random.default_rng(seed)
    pool = seeds(seed)
    while True:
        suffix, data = pool[int(rng.integers(len(pool)))]
        yield suffix, mutate(rng, suffix, data)


def fuzz(n: int, seed: int = 0, *, seconds: float | None = None, timeout: float = 30.0,
         out: str | None = None, workers: int = 2, progress: bool = False,
         in_process: bool = False) -> Counter:
    """Run ``n`` inputs (or until ``seconds`` pass); the counts of outcomes, with every
    failing input written to ``out``."""
    counts: Counter = Counter()
    start = time.monotonic()
    gen = inputs(seed)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n, unit=" inputs", file=sys.stderr)

    def record(k: int, suffix: str, data: bytes, outcomes: list[Outcome]) -> None:
        for o in outcomes:
            counts[o.kind] += 1
            if o.kind in FAILURES and out is not None:
                os.makedirs(out, exist_ok=True)
                base = os.path.join(out, f"input-{seed}-{k}{suffix}")
                with open(base, "wb") as f:
                    f.write(data)
                with open(base + ".txt", "w") as f:
                    f.write(f"{o.kind}\n{o.detail}\n")
        if bar is not None:
            bar.update(1)

    done = 0
    # memory-backed where there is one: a folder made and removed per input cost as
    # much as checking a small input
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    scratch = tempfile.TemporaryDirectory(prefix="tomkit-fuzz-", dir=shm)
    workdir = scratch.name
    if in_process:
        for k in range(n):
            if seconds is not None and time.monotonic() - start > seconds:
                break
            suffix, data = next(gen)
            record(k, suffix, data, _task(data, suffix, workdir))
            done += 1
    else:
        # pebble's pool kills the worker of an input that overruns its timeout, and a
        # worker's death fails that input's future only (concurrent.futures' pool breaks
        # as a whole, and leaves a hung worker running)
        with ProcessPool(max_workers=workers) as pool:
            done = _pooled(pool, gen, n, start, seconds, timeout, workdir, workers, record)
            pool.stop()
    scratch.cleanup()
    if bar is not None:
        bar.close()
    counts["inputs"] = done
    return counts


# Inputs go to the workers in chunks, and the next chunk is sent as soon as one comes
# back: one input per task, sent in waves, left the two cores idle 60 % of the time
# (the task's round trip and the wave's slowest input cost more than checking a small
# input). A chunk that dies or overruns is run again one input per task, so a crash or
# a hang is still pinned to its own input.
CHUNK = 16


def _chunk(items: list[tuple[bytes, str]], workdir: str) -> list[list[Outcome]]:
    return [_task(data, suffix, workdir) for data, suffix in items]


def _pooled(pool: ProcessPool, gen: Iterator[tuple[str, bytes]], n: int, start: float,
            seconds: float | None, timeout: float, workdir: str, workers: int,
            record) -> int:
    pending: dict = {}  # future -> [(k, suffix, data), ...]
    k = done = 0

    def more() -> bool:
        return k < n and (seconds is None or time.monotonic() - start < seconds)

    while more() or pending:
        while more() and len(pending) < 2 * workers:
            items = []
            for _ in range(min(CHUNK, n - k)):
                suffix, data = next(gen)
                items.append((k, suffix, data))
                k += 1
            fut = pool.schedule(_chunk, ([(d, s) for _, s, d in items], workdir),
                                timeout=timeout)
            pending[fut] = items
        finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
        for fut in finished:
            items = pending.pop(fut)
            try:
                results = fut.result()
            except (TimeoutError, ProcessExpired):
                if len(items) > 1:  # find which input it was, one per task
                    for item in items:
                        pending[pool.schedule(_chunk, ([(item[2], item[1])], workdir),
                                              timeout=timeout)] = [item]
                    continue
                results = [_failed(fut, timeout)]
            for (j, suffix, data), outcomes in zip(items, results):
                record(j, suffix, data, outcomes)
                done += 1
    return done


def _failed(fut, timeout: float) -> list[Outcome]:
    try:
        fut.result()
    except TimeoutError:
        return [Outcome("hang", f"no answer in {timeout} s")]
    except ProcessExpired as e:
        return [Outcome("crash", f"the worker process died: {e}")]
    raise AssertionError("a failed future that did not fail")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=None, help="stop after this long")
    ap.add_argument("--seed", type=int, default=None, help="default: from the clock")
    ap.add_argument("--timeout", type=float, default=30.0, help="per input, seconds")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="out/fuzz-inputs", help="failing inputs go here")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time()) % 100_000
    print(f"fuzzing the readers and the checker: seed {seed}", flush=True)
    t0 = time.monotonic()
    counts = fuzz(args.inputs, seed, seconds=args.seconds, timeout=args.timeout,
                  out=args.out, workers=args.workers, progress=True)
    fails = sum(counts[k] for k in FAILURES)
    print(f"{counts['inputs']} inputs in {time.monotonic() - t0:.0f} s (two runs each): "
          + ", ".join(f"{k} {counts[k]}" for k in ("verdict", "error", *FAILURES)))
    if fails:
        print(f"failing inputs written to {args.out}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
