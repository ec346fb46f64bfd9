"""Columnar chunks: many complete traces encoded as integer arrays for vectorized checks.

Checking millions of events one Python object at a time would cost far more
than reading them. A chunk instead holds the events of many whole traces as
numpy arrays, sorted by (trace, process, local order), with every string
replaced by a dense integer code. Each property's ``detect`` then decides the
verdict of every trace in the chunk with a handful of array operations, and
only traces that fail (or that a fast test cannot settle) are handed to the
exact, per-trace reference check, which also finds the witness.

Codes: ``t`` trace, ``p`` process (shared with view members), ``msg`` message
string (shared with deps), ``tm`` message within its trace (dense over the
chunk), ``tp`` one process's event sequence within one trace (dense, in sorted
order, so each ``tp`` group is a contiguous run of rows).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tomkit.checker.trace import Ev, Trace
from tomkit.traces.errors import Location, TraceFormatError
from tomkit.traces.schema import KINDS

KIND = {k: i for i, k in enumerate(KINDS)}
ENCODED = ("trace", "process", "msg")  # string columns worth dictionary-encoding early
#: the columns every chunk reads (the others on demand)
CORE_COLUMNS = ("trace", "process", "kind", "msg", "deps", "view", "members", "time", "seq",
                "real_time")
SEND, RECV, DELIVER, VIEW, CRASH, JOIN, LEAVE, PACKET, NEGOTIATE = (KIND[k] for k in KINDS)
#: an extension column the chunk carries when present: the slot of a send, join or packet
#: (Bar-Joseph, Keidar, Anker and Lynch's time slots; checker/properties/member_liveness.py
#: and rate.py read it)
SLOT_COLUMN = "x_slot"
#: an extension column marking a packet outside the reservation: 003's join announcements
#: (Bar-Joseph et al. section 4: join messages are not counted in the rate); rate.py
JOIN_COLUMN = "x_join"
#: an extension column: the offset of a message in a per-key log (Kafka's, Jepsen's queue
#: workloads); checker/properties/log_offsets.py reads it
OFFSET_COLUMN = "x_offset"
#: the extension columns of a ``negotiate`` record (checker/properties/rate.py): the
#: reservation a process declares
RESERVE_COLUMNS = ("x_rate_max", "x_rate_avg", "x_rate_window")
RN_COLUMN = "x_rn"


def _codes(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """Dense int32 codes (null -> -1) and the dictionary, for a string or dictionary column."""
    if isinstance(arr, pa.ChunkedArray):
        if pa.types.is_dictionary(arr.type):
            arr = arr.unify_dictionaries()
            dicts = arr.chunk(0).dictionary if arr.num_chunks else pa.array([], pa.string())
            idx = pa.chunked_array([c.indices for c in arr.chunks], arr.type.index_type)
            idx = idx.combine_chunks() if idx.num_chunks else pa.array([], pa.int32())
            codes = idx.fill_null(-1).to_numpy().astype(np.int32, copy=False)
            return codes, dicts.to_pylist()
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], pa.string())
    if not pa.types.is_dictionary(arr.type):
        arr = pc.dictionary_encode(arr)
    codes = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    return codes, arr.dictionary.to_pylist()


def _codes_with(col: pa.ChunkedArray, extra: pa.Array) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Codes of a string (or dictionary) column and of extra string values (list items)
    in one code space: the column's dictionary, then any extra value not in it."""
    codes, names = _codes(col)
    if len(extra) == 0:
        return codes, np.zeros(0, np.int32), names
    ecodes, enames = _codes(extra)
    at = pc.index_in(pa.array(enames, pa.string()), value_set=pa.array(names, pa.string()))
    mapping = at.fill_null(-1).to_numpy().astype(np.int32)
    new = mapping < 0
    mapping[new] = len(names) + np.arange(int(new.sum()), dtype=np.int32)
    names = names + [enames[i] for i in np.flatnonzero(new)]
    return codes, np.where(ecodes >= 0, mapping[np.maximum(ecodes, 0)], -1), names


_FIRST_LETTER = np.full(256, -1, np.int8)
for _i, _k in enumerate(KINDS):
    _FIRST_LETTER[ord(_k[0])] = _i
assert len({k[0] for k in KINDS}) == len(KINDS)  # the first letter tells the kind


def encode_strings(table: pa.Table) -> pa.Table:
    """Dictionary-encode the high-volume string columns of a batch. The engine calls this in
    its reading thread, so the workers building chunks find the codes ready."""
    for name in ENCODED:
        i = table.schema.get_field_index(name)
        col = table.column(i)
        if not pa.types.is_dictionary(col.type):
            table = table.set_column(i, name, pc.dictionary_encode(col))
    return table


def kind_codes(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """KIND codes of a validated ``kind`` column. The readers have checked every value is a
    known kind, and the kinds differ in their first letter, so one byte per row decides."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], pa.string())
    if pa.types.is_dictionary(arr.type):
        codes, names = _codes(arr)
        return np.array([KIND[k] for k in names], np.int8)[codes]
    arr = arr.cast(pa.string())
    if len(arr) == 0:
        return np.zeros(0, np.int8)
    offsets = np.frombuffer(arr.buffers()[1], np.int32, len(arr) + 1, arr.offset * 4)
    data = np.frombuffer(arr.buffers()[2], np.uint8)
    return _FIRST_LETTER[data[offsets[:-1]]]


def factorize(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense ids for int64 keys, in order of first appearance (hash-based, no sort)."""
    if len(keys) == 0:
        return np.zeros(0, np.int32), 0
    enc = pc.dictionary_encode(pa.array(keys))
    return enc.indices.to_numpy().astype(np.int32, copy=False), len(enc.dictionary)


def dense_ids(keys: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense int32 ids for non-negative int64 keys below ``space``, numbered in increasing key
    order, and the distinct keys. Direct addressing when the key space is small (the usual
    case: a few codes multiplied together), a hash and a sort of the distinct keys otherwise."""
    if len(keys) == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.int64)
    if space <= 4 * len(keys) + 65536:
        present = np.zeros(space, bool)
        present[keys] = True
        distinct = np.flatnonzero(present)
        lookup = np.zeros(space, np.int32)
        lookup[distinct] = np.arange(len(distinct), dtype=np.int32)
        return lookup[keys], distinct
    enc = pc.dictionary_encode(pa.array(keys))
    d = enc.dictionary.to_numpy()
    order = np.argsort(d)
    rank = np.empty(len(d), np.int32)
    rank[order] = np.arange(len(d), dtype=np.int32)
    return rank[enc.indices.to_numpy()], d[order]


def differs_in_group(keys: np.ndarray, values: np.ndarray, space: int) -> np.ndarray:
    """Per row, whether its value differs from another row's value with the same key:
    some row of each group writes its value into a table, and every row compares. A
    group with one value compares equal everywhere; a group with two values has rows
    that differ from whichever was written. Linear, with no sort when the keys are
    small (else dense_ids)."""
    if len(keys) == 0:
        return np.zeros(0, bool)
    if space <= 4 * len(keys) + 65536:
        ids, n = keys, space
    else:
        ids, distinct = dense_ids(keys, space)
        n = len(distinct)
    table = np.empty(n, values.dtype)
    table[ids] = values
    return table[ids] != values


def group_starts(sorted_keys: np.ndarray) -> np.ndarray:
    """Start offsets of the runs of equal values in a sorted array, plus the end."""
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(1, np.int64)
    brk = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    return np.concatenate(([0], brk, [n])).astype(np.int64)


def rank_in_group(group_of_row: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Position of each row inside its contiguous group."""
    return np.arange(len(group_of_row), dtype=np.int64) - starts[group_of_row]


def forward_fill_in_groups(mark: np.ndarray, group_start_of_row: np.ndarray) -> np.ndarray:
    """For each row, the index of the last marked row at or before it in its group, else -1."""
    idx = np.where(mark, np.arange(len(mark)), -1)
    last = np.maximum.accumulate(idx) if len(idx) else idx
    return np.where(last >= group_start_of_row, last, -1)


def backward_fill_in_groups(mark: np.ndarray, group_end_of_row: np.ndarray) -> np.ndarray:
    """For each row, the index of the first marked row strictly after it in its group, else -1."""
    n = len(mark)
    big = n + 1
    idx = np.where(mark, np.arange(n), big)
    nxt = np.minimum.accumulate(idx[::-1])[::-1] if n else idx
    after = np.concatenate((nxt[1:], [big])) if n else nxt
    return np.where(after < group_end_of_row, after, -1)


@dataclass
class Piece:
    """Records of complete traces as read: an Arrow table, line/row numbers, their source."""

    table: pa.Table
    lines: np.ndarray
    source: str
    fmt: str  # "jsonl" or "parquet": decides whether ``lines`` are lines or rows


class Chunk:
    """Many complete traces, columnar. Build with ``Chunk.build(pieces)``."""

    @classmethod
    def build(cls, pieces: list[Piece]) -> Chunk:
        self = cls()
        self.cache: dict = {}  # results shared between properties of one chunk
        tables = [_with_columns(pc_.table, CORE_COLUMNS) for pc_ in pieces]
        for name in (*ENCODED, "kind"):  # encoded pieces (the engine's, a Parquet
            # reader's) and plain ones (JSON Lines) do not mix
            if len({t.schema.field(name).type for t in tables}) > 1:
                tables = [t.set_column(t.schema.get_field_index(name), name,
                                       t.column(name).cast(pa.string())) for t in tables]
        table = pa.concat_tables(tables, promote_options="permissive") if tables else None
        self._pieces = pieces
        self._table = table  # the columns few properties read are taken from it on demand
        self.sources = [pc_.source for pc_ in pieces]
        self.fmts = [pc_.fmt for pc_ in pieces]
        n = table.num_rows
        self.n = n

        t, names = _codes(table.column("trace"))
        # a slice of an encoded batch keeps the whole batch's dictionary: drop unused ids
        used = np.zeros(len(names), bool)
        used[t] = True
        if not used.all():
            remap = np.cumsum(used, dtype=np.int32) - 1
            t = remap[t]
            names = [x for x, u in zip(names, used) if u]
        self.trace_names = names
        members = table.column("members").combine_chunks()
        p, member_codes, names = _codes_with(table.column("process"), members.flatten())
        # number processes by name, so "first" among processes means the same in every engine
        by_name = np.argsort(np.array(names, dtype=object), kind="stable") if names else []
        rank = np.empty(len(names), np.int32)
        rank[by_name] = np.arange(len(names), dtype=np.int32)
        p = rank[p]
        member_codes = rank[member_codes]
        self.proc_names = [names[i] for i in by_name]
        # message ids of the rows only; the ids in deps are read when a property asks
        # (causal order: _deps), as hashing every dependency costs as much as the rows
        msg, self.msg_names = _codes(table.column("msg"))
        kind = kind_codes(table.column("kind"))
        view_col = table.column("view")
        if view_col.null_count == n:  # most traces log no views
            view, self.view_names = np.full(n, -1, np.int32), []
        else:
            view, self.view_names = _codes(view_col)
        seq_col = table.column("seq")
        has_seq_any = seq_col.null_count < n
        mem_off, mem_len = _list_layout(members)

        # ---- sort rows into (trace, process, local order) ---------------------------------
        NP = max(len(self.proc_names), 1)
        k1 = t.astype(np.int64) * NP + p
        if has_seq_any:
            seq_null = seq_col.is_null().to_numpy(zero_copy_only=False)
            seq = seq_col.fill_null(-1).to_numpy().astype(np.int64)
            order = np.lexsort((np.where(seq_null, np.arange(n), seq), seq_null, k1))
        elif n and np.all(k1[1:] >= k1[:-1]):
            order = None  # already in order: the common case for files tomkit writes
        elif len(self.trace_names) * NP <= 1 << 16:
            # numpy's stable sort of 16-bit keys is a radix sort: linear, and a chunk of
            # about a thousand traces of a few processes fits
            order = np.argsort(k1.astype(np.uint16), kind="stable")
        else:
            order = np.argsort(k1, kind="stable")
        self._order = order

        self.t, self.p, self.kind, self.msg, self.view = (self._perm(a)
                                                          for a in (t, p, kind, msg, view))
        self.mem_off, self.mem_len = self._perm(mem_off), self._perm(mem_len)
        self.member_codes = member_codes
        k1 = self._perm(k1)

        self.ntr = len(self.trace_names)
        self.trace_start = np.searchsorted(self.t, np.arange(self.ntr + 1)).astype(np.int64)
        self.tp_start = group_starts(k1)
        self.ntp = len(self.tp_start) - 1
        self.tp = np.repeat(np.arange(self.ntp, dtype=np.int32), np.diff(self.tp_start))
        self.tp_trace = self.t[self.tp_start[:-1]] if self.ntp else np.zeros(0, np.int32)
        self.tp_proc = self.p[self.tp_start[:-1]] if self.ntp else np.zeros(0, np.int32)
        self.bad_traces: dict[int, TraceFormatError] = {}
        if has_seq_any:
            self._check_seq(self._perm(seq_null), self._perm(seq))

        # ---- messages within traces: dense ids -------------------------------------------
        NM = max(len(self.msg_names), 1)
        self._nm = NM
        has_msg = self.msg >= 0
        keys = self.t[has_msg].astype(np.int64) * NM + self.msg[has_msg]
        # numbered by (trace, msg): each trace's messages are one contiguous range of ids
        ids, distinct = dense_ids(keys, max(self.ntr, 1) * NM)
        self._tm_keys = distinct
        self.ntm = len(distinct)
        self.tm = np.full(n, -1, np.int32)
        self.tm[has_msg] = ids
        self.tm_t = (distinct // NM).astype(np.int32)
        self.tm_start = np.searchsorted(self.tm_t, np.arange(self.ntr + 1)).astype(np.int64)
        self.max_msgs = int(np.diff(self.tm_start).max()) if self.ntr else 0
        # each row's message as an index within its trace's range of ids
        self.ml = np.where(has_msg, self.tm - self.tm_start[self.t], -1)

        # ---- per-row context ---------------------------------------------------------------
        is_view = self.kind == VIEW
        if is_view.any():
            start_of_row = self.tp_start[self.tp]
            end_of_row = self.tp_start[self.tp + 1]
            last = forward_fill_in_groups(is_view, start_of_row)
            self.curview = np.where(last >= 0, self.view[np.maximum(last, 0)], -1)
            nxt = backward_fill_in_groups(is_view, end_of_row)
            self.nextview = np.where(nxt >= 0, self.view[np.maximum(nxt, 0)], -1)
        else:
            self.curview = self.nextview = np.full(n, -1, np.int32)
        self.trace_has = _TraceHas(self)
        self._deliveries()
        return self

    def _perm(self, a: np.ndarray) -> np.ndarray:
        """``a`` (one value per row as read) in the chunk's sorted row order."""
        return a if self._order is None else a[self._order]

    # ---- columns few properties read, taken from the table when first asked for ----------

    @cached_property
    def time(self) -> np.ndarray:
        return self._perm(np.asarray(self._table.column("time").to_numpy(), np.float64))

    @cached_property
    def real_time(self) -> np.ndarray:
        return self._perm(np.asarray(self._table.column("real_time").to_numpy(), np.float64))

    @cached_property
    def slot(self) -> np.ndarray:
        col = _extension(self._pieces, SLOT_COLUMN, _is_number, pa.float64())
        return self._perm(np.floor(np.asarray(col.to_numpy(zero_copy_only=False),
                                              np.float64)))

    @cached_property
    def offset(self) -> np.ndarray:
        col = _extension(self._pieces, OFFSET_COLUMN, _is_number, pa.float64())
        return self._perm(np.asarray(col.to_numpy(zero_copy_only=False), np.float64))

    @cached_property
    def reserve(self) -> tuple[np.ndarray, ...]:
        """Per row, a ``negotiate`` record's x_rate_max, x_rate_avg, x_rate_window (NaN
        where absent) and x_rn."""
        cols = tuple(self._perm(np.asarray(_extension(self._pieces, name, _is_number,
                                                      pa.float64()).to_numpy(
                                                          zero_copy_only=False), np.float64))
                     for name in RESERVE_COLUMNS)
        rn = _extension(self._pieces, RN_COLUMN, pa.types.is_boolean, pa.bool_())
        return (*cols, self._perm(np.asarray(rn.fill_null(False).to_numpy(
            zero_copy_only=False), bool)))

    @cached_property
    def unreserved(self) -> np.ndarray:
        col = _extension(self._pieces, JOIN_COLUMN, pa.types.is_boolean, pa.bool_())
        return self._perm(np.asarray(col.fill_null(False).to_numpy(zero_copy_only=False),
                                     bool))

    @cached_property
    def lines(self) -> np.ndarray:
        return self._perm(np.concatenate([pc_.lines for pc_ in self._pieces]).astype(np.int64))

    @cached_property
    def src(self) -> np.ndarray:
        return self._perm(np.concatenate(
            [np.full(pc_.table.num_rows, i, np.int16) for i, pc_ in enumerate(self._pieces)]
        ) if self._pieces else np.zeros(0, np.int16))

    @cached_property
    def dep_len(self) -> np.ndarray:
        """Per row, the length of its ``deps`` (-1: none)."""
        return self._deps()[0]

    @cached_property
    def dep_off(self) -> np.ndarray:
        """Per row, where its deps start in ``dep_codes``, ``dep_tm`` and ``dep_ml``."""
        return self._deps()[1]

    @cached_property
    def dep_codes(self) -> np.ndarray:
        """Each dependency as a code into ``dep_names``, in sorted row order."""
        return self._deps()[2]

    @cached_property
    def dep_tm(self) -> np.ndarray:
        """Each dependency's message id (``tm``), -1 for a message no row of its trace
        names."""
        return self._deps()[3]

    @cached_property
    def dep_ml(self) -> np.ndarray:
        """Each dependency's message as an index within its trace (-1 as in ``dep_tm``)."""
        return self._deps()[4]

    def _deps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        cached = self.cache.get("deps")
        if cached is not None:
            return cached
        deps = self._table.column("deps").combine_chunks()
        dep_off, dep_len = _list_layout(deps)
        dep_off, dep_len = self._perm(dep_off), self._perm(dep_len)
        dep_codes, self.dep_names = _codes(deps.flatten())
        row_has_dep = dep_len > 0
        dep_codes = dep_codes[concat_ranges(dep_off[row_has_dep], dep_len[row_has_dep])]
        # the flat array now follows the sorted row order
        lens = np.maximum(dep_len, 0)
        dep_off = np.cumsum(lens) - lens
        # a dependency's id is that of the rows naming the same message in its trace
        at = pc.index_in(pa.array(self.dep_names, pa.string()),
                         value_set=pa.array(self.msg_names, pa.string()))
        as_msg = at.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        dep_t = np.repeat(self.t, lens).astype(np.int64)
        key = dep_t * self._nm + as_msg[dep_codes]
        pos = np.searchsorted(self._tm_keys, key)
        pos = np.minimum(pos, max(self.ntm - 1, 0))
        found = (as_msg[dep_codes] >= 0) & (self._tm_keys[pos] == key) if self.ntm else \
            np.zeros(len(key), bool)
        dep_tm = np.where(found, pos, -1).astype(np.int32)
        dep_ml = np.where(found, dep_tm - self.tm_start[dep_t], -1)
        self.cache["deps"] = out = (dep_len, dep_off, dep_codes, dep_tm, dep_ml)
        return out

    # ---- helpers ------------------------------------------------------------------------

    def per_trace_any(self, mask: np.ndarray) -> np.ndarray:
        """Per trace: does any of its rows have ``mask`` set (rows are sorted by trace)."""
        if self.ntr == 0:
            return np.zeros(0, bool)
        return np.logical_or.reduceat(mask, self.trace_start[:-1])

    def _check_seq(self, seq_null: np.ndarray, seq: np.ndarray) -> None:
        """seq is all-or-nothing per process and never repeats: else the trace is bad input."""
        g = self.tp
        nulls = np.bincount(g, weights=seq_null, minlength=self.ntp)
        sizes = np.diff(self.tp_start)
        mixed = np.flatnonzero((nulls > 0) & (nulls < sizes))
        for gi in mixed:
            rows = np.arange(self.tp_start[gi], self.tp_start[gi + 1])
            r = rows[seq_null[rows]][0]
            self._bad(r, f"process {self.proc_names[self.p[r]]} gives seq on some events only")
        same = (g[1:] == g[:-1]) & (seq[1:] == seq[:-1]) & ~seq_null[1:]
        for r in np.flatnonzero(same) + 1:
            self._bad(r, f"process {self.proc_names[self.p[r]]} repeats seq {seq[r]}")

    def _bad(self, row: int, message: str) -> None:
        ti = int(self.t[row])
        if ti not in self.bad_traces:
            self.bad_traces[ti] = TraceFormatError(self.location(row), message, "seq")

    def location(self, row: int) -> Location:
        s = int(self.src[row])
        if self.fmts[s] == "parquet":
            return Location(self.sources[s], row=int(self.lines[row]))
        return Location(self.sources[s], line=int(self.lines[row]))

    def _deliveries(self) -> None:
        """The first delivery of each message at each process: what order properties read."""
        d = np.flatnonzero(self.kind == DELIVER)
        self.d_rows = d
        key = self.tp[d].astype(np.int64) * max(self.max_msgs, 1) + self.ml[d]
        space = self.pm_space()
        counts = np.bincount(key, minlength=space) if space <= 4 * len(d) + 65536 else None
        if counts is not None and (len(d) == 0 or counts.max() <= 1):
            first = np.ones(len(d), bool)  # no repeated delivery anywhere: the common case
        else:
            ids, distinct = dense_ids(key, space)
            first_at = np.full(len(distinct), len(d), np.int64)
            np.minimum.at(first_at, ids, np.arange(len(d)))
            first = first_at[ids] == np.arange(len(d))
        self.d_first = first
        f = d[first]
        self.f_rows = f
        self.f_tp = self.tp[f]
        self.f_tm = self.tm[f]
        self.f_t = self.t[f]
        starts = group_starts(self.f_tp)
        grp = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        self.f_pos = rank_in_group(grp, starts)  # index among first deliveries
        # first sends: sender's tp and the rank of the send among that process's sends
        s = np.flatnonzero(self.kind == SEND)
        self.s_rows = s
        s_starts = group_starts(self.tp[s])
        s_grp = np.repeat(np.arange(len(s_starts) - 1), np.diff(s_starts))
        s_rank = rank_in_group(s_grp, s_starts)
        self.send_row = np.full(self.ntm, -1, np.int64)
        self.send_rank = np.full(self.ntm, -1, np.int64)
        # reversed assignment leaves the first send of a repeated id in place
        self.send_row[self.tm[s][::-1]] = s[::-1]
        self.send_rank[self.tm[s][::-1]] = s_rank[::-1]

    @cached_property
    def resent(self) -> np.ndarray:
        """Per trace: whether some message id is sent more than once (integrity's
        duplicate-send; fifo-order and causal-order leave such a trace to their exact
        checks, which count each of the id's sends)."""
        counts = np.bincount(self.tm[self.s_rows], minlength=self.ntm)
        out = np.zeros(self.ntr, bool)
        out[self.tm_t[counts > 1]] = True
        return out

    def pm_space(self) -> int:
        return max(self.ntp, 1) * max(self.max_msgs, 1)

    # ---- exact per-trace view -----------------------------------------------------------

    def _reserve(self, r: int) -> tuple:
        mx, avg, k, rn = self.reserve
        return (*(None if np.isnan(a[r]) else float(a[r]) for a in (mx, avg, k)),
                bool(rn[r]))

    def trace(self, ti: int) -> Trace:
        """The exact Python view of trace ``ti`` for the reference checks."""
        lo, hi = int(self.trace_start[ti]), int(self.trace_start[ti + 1])
        events: dict[str, list[Ev]] = {}
        # each column's slice turned into Python objects once, then one loop over rows:
        # a numpy scalar per field and row cost twenty microseconds a record (tomkit
        # watch builds this view each time a broken trace is judged again)
        rows = slice(lo, hi)

        def floats(a: np.ndarray) -> list:
            v = a[rows]
            return np.where(np.isnan(v), None, v).tolist()

        def ints(a: np.ndarray) -> list:
            v = a[rows]
            out = np.full(len(v), None, object)
            ok = ~np.isnan(v)
            out[ok] = v[ok].astype(np.int64).tolist()
            return out.tolist()

        procs = [self.proc_names[c] for c in self.p[rows].tolist()]
        kind_codes_ = self.kind[rows].tolist()
        msg = self.msg[rows].tolist()
        view = self.view[rows].tolist()
        dep_len, dep_off = self.dep_len[rows].tolist(), self.dep_off[rows].tolist()
        times, rts, slots, offs = (floats(self.time), floats(self.real_time),
                                   ints(self.slot), ints(self.offset))
        unres = self.unreserved[rows].tolist()
        srcs, lines = self.src[rows].tolist(), self.lines[rows].tolist()
        locs = [Location(self.sources[s], row=ln) if self.fmts[s] == "parquet" else
                Location(self.sources[s], line=ln) for s, ln in zip(srcs, lines)]
        kinds, msg_names, view_names = KINDS, self.msg_names, self.view_names
        for j in range(hi - lo):
            k = kind_codes_[j]
            deps = None
            if dep_len[j] >= 0 and k == SEND:
                o = dep_off[j]
                deps = tuple(self.dep_names[c] for c in self.dep_codes[o:o + dep_len[j]])
            members = None
            if k == VIEW:
                r = lo + j
                o, ln = int(self.mem_off[r]), int(self.mem_len[r])
                members = tuple(self.proc_names[c] for c in self.member_codes[o:o + ln])
            m, v = msg[j], view[j]
            events.setdefault(procs[j], []).append(Ev(
                process=procs[j],
                kind=kinds[k],
                msg=msg_names[m] if m >= 0 else None,
                deps=deps,
                view=view_names[v] if v >= 0 else None,
                members=members,
                time=times[j],
                location=locs[j],
                real_time=rts[j],
                slot=slots[j],
                unreserved=unres[j],
                offset=offs[j],
                reserve=self._reserve(lo + j) if k == NEGOTIATE else None,
            ))
        return Trace(self.trace_names[ti], events)



def _with_columns(table: pa.Table, cols: tuple[str, ...]) -> pa.Table:
    """``table``'s columns ``cols`` (a table read before ``real_time`` existed may lack
    it: all null then)."""
    n = table.num_rows
    out = table.select([c for c in cols if c in table.column_names])
    for c in cols:
        if c not in out.column_names:
            out = out.append_column(pa.field(c, pa.float64()), pa.nulls(n, pa.float64()))
    return out.select(list(cols))


def _is_number(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


def _extension(pieces: list[Piece], name: str, fits, typ: pa.DataType) -> pa.Array:
    """The extension column ``name`` of all pieces as ``typ``: null where a piece lacks it
    or holds another type (``fits`` judges the type)."""
    parts = []
    for piece in pieces:
        table = piece.table
        if name in table.column_names and fits(table.column(name).type):
            parts.extend(table.column(name).cast(typ).chunks)
        else:
            parts.append(pa.nulls(table.num_rows, typ))
    return pa.chunked_array(parts, typ).combine_chunks()


class _TraceHas(dict):
    """Per trace, whether it has a kind of record or field, computed when first asked:
    ``send``, ``deliver``, ``view``, ``packet``, ``time``, ``real_time``, ``offset``,
    ``deps`` (a send that carries deps)."""

    def __init__(self, chunk: Chunk):
        super().__init__()
        # a weak reference: a cycle chunk <-> table would keep each chunk's hundreds of MB
        # until Python's cyclic collector happened to run (a check of 10 M events held
        # about 480 MB of dead chunks so, and paid the page faults of fresh memory)
        self._chunk = weakref.ref(chunk)

    def __missing__(self, key: str) -> np.ndarray:
        c = self._chunk()
        assert c is not None, "a chunk's trace_has outlived its chunk"
        if key in KIND:
            mask = c.kind == KIND[key]
        elif key in ("time", "real_time", "offset"):
            mask = ~np.isnan(getattr(c, key))
        elif key == "deps":
            mask = (c.kind == SEND) & (c.dep_len >= 0)
        else:
            raise KeyError(key)
        self[key] = out = c.per_trace_any(mask)
        return out


def _list_layout(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Offsets into ``arr.flatten()`` and lengths (-1 for a null list) of a list column."""
    if len(arr) == 0 or arr.null_count == len(arr):  # e.g. no view has members here
        return np.zeros(len(arr), np.int64), np.full(len(arr), -1, np.int64)
    offsets = arr.offsets.to_numpy().astype(np.int64)
    starts = offsets[:-1] - offsets[0]  # flatten() starts at the slice's first item
    lens = np.diff(offsets)
    if arr.null_count:
        null = arr.is_null().to_numpy(zero_copy_only=False)
        if lens[null].any():  # null lists backed by items, which flatten() drops
            lens = np.where(null, 0, lens)
            starts = np.cumsum(lens) - lens
        lens = np.where(null, -1, lens)
    return starts, lens


def concat_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + l) for each pair, vectorized."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    ends = np.cumsum(lengths)
    offs = np.repeat(starts - (ends - lengths), lengths)
    return np.arange(total, dtype=np.int64) + offs
