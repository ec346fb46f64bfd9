"""The default safety properties as DataFrame operations: one detection code per trace.

The same properties, names and codes as ``checker/properties`` (HOLDS, UNKNOWN,
VIOLATED, EXACT; see each module's docstring for the definition and its source). The
whole decision is one query (``decide``): the events are hash-partitioned by trace once
(``KEY``); every feature is a window keyed by the trace plus something (a process, a
message, a view transition), so Spark sorts within partitions but never shuffles again
and needs no join; each test below marks the events it finds with a bit (``decide``'s ``row``);
one aggregation by trace ORs the bits and counts the facts, and each property's code is a
boolean formula over the trace's flags (``SQL_FORMS``). Where a test below speaks of a
group (per trace and message, per view), it is a window over that group. Per property,
how it is decided here:

* integrity: a delivery whose (trace, process, msg) already has an earlier one (a
  running count); a first delivery whose message has no send, in a trace that logs
  sends; a (trace, msg) with two sends. Unknown: deliveries but no sends.
* total-order-strong: the property's own linear test (total_order.py): per process, the
  predecessor of each first delivery among the first deliveries in the same installed view
  (the last first delivery of a frame that ends before it); violated when one (trace,
  view, msg) has two different predecessors.
* total-order-weak and global-order: the order-consistency filter of order_filter.py, one
  round: rank(m) = the largest position of m's first delivery at any process; a trace
  whose processes all deliver in increasing rank has a global sequence (the ranks), so
  both hold. Any other trace is EXACT, as in the single-machine engine: the exact check
  (``exact.py``) decides it. Cycle detection is not natural in SQL; the filter settles
  every trace without a violation in the data sets we generate (all processes deliver
  one sequence, or a prefix of it).
* causal-order: the deps of m's first send, at each first delivery of m, become rows of
  their own keyed by the dep (an explode), beside the process's first deliveries keyed by
  their message; a window per (trace, process, message) finds each dep's first delivery:
  violated if missing or not earlier. Unknown: no sends, or no send carries deps. A
  trace with a reused id (two sends of one id) is EXACT: causal.py counts every send.
* fifo-order: per (trace, process, sender), the i-th first delivery must be the sender's
  i-th send (window row_number against the send rank). Unknown: no sends. A trace with
  a reused id is EXACT: fifo.py puts the id in each of its senders' orders.
* prefix-order: per (trace, position among a process's first deliveries), more than one
  message is a divergence; a trace with views is EXACT (the check restricts each pair to
  the views both installed).
* view-agreement: aggregates over view events (a view installed twice by a process; one
  view id with two member sets); any other trace with views is EXACT (self inclusion and
  the order of view ids are the exact check's: view events are few).
* same-view-delivery: per (trace, msg), first deliveries in more than one view (no view
  counts as one).
* sending-view-delivery: the sending view against the delivering view. A trace with a
  reused id is EXACT: views.py counts each send's view.
* virtual-synchrony: same messages between the same two views (per transition V -> V',
  the processes that install both against the deliverers of each message in between);
  a trace with a view installed twice is EXACT, as in ``virtual_synchrony.detect``.
  Unknown (all four view properties): no view events.
* agreement (uniform) and validity: per (trace, msg), the correct processes (no crash
  record) that deliver it against the trace's correct processes; sends of correct
  processes their sender never delivers. A trace with views or a leave is EXACT: who
  owes a message then depends on membership (``agreement.py``); for validity, so is a
  trace with a reused id (its witness is the non-delivering sender's own send).

* view-sequence: a trace with views is EXACT, as in its ``detect`` (view events are
  few). Unknown: no view events.
* member-liveness: for a trace without join, leave or crash, every process delivers every
  sent message (the count of first deliveries per message against the trace's processes);
  any other trace with sends is EXACT (``member_liveness.py``: who owes a message depends
  on the join and the send). Unknown: no sends.
* realtime-latency: per first delivery, its real_time minus its send's, against the bound
  (``--realtime-bound``, else ``--latency-bound``). Unknown: no bound, or nothing measured.
  A trace with a reused id is EXACT: its first send is its earliest in real time.
* rate: packet records per (trace, process, slot), the slot from x_slot else from time and
  ``--slot``; a window of K slots is a range frame over the slot. A trace with a packet
  that cannot be placed is EXACT. Unknown: no reservation given, or no packets.

"First send" of a message is the one of the process first by name, earliest in its
order, and "first delivery" the earliest at a process, as in ``checker/chunk.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from tomkit.checker.properties import (
    EXACT,
    HOLDS,
    UNKNOWN,
    VIOLATED,
    Options,
    properties,
    rate,
    realtime_latency,
)
from tomkit.checker.spark.read import KEY

#: the properties a scan decides, in report order: the registry's with ``scan`` set
NAMES = [n for n, p in properties().items() if p.scan]
ORDER = ["_o_seq", "src", "pos"]  # a process's local order: seq, else file and position


@dataclass
class Decided:
    codes: DataFrame  # KEY, events, one int code column per property, the facts
    firsts: DataFrame  # first deliveries with their send's time, for the report
    bad_seq: DataFrame  # KEY src pos message records, of the traces rejected for seq
    # the good traces' events with their per-process features (None: the files engine)
    events: DataFrame | None
    # set by arrow.decide_arrow, which settles these in its one pass (else job.py derives
    # them from ``events``): the reference-check results (exact.ROWS_SCHEMA) of the
    # flagged traces, and protocol, config, iol of the good traces' deliveries
    exact: DataFrame | None = None
    deliveries: DataFrame | None = None
    # what the engine cached, for the caller to release when the scan is done
    cached: list[DataFrame] = field(default_factory=list)

    def release(self) -> None:
        for df in (self.codes, self.firsts, *self.cached):
            df.unpersist()
        if self.events is not None:
            self.events.unpersist()


def _w(*extra: str | Column, order: list[str] | None = None) -> Window:
    return Window.partitionBy(*KEY, *extra).orderBy(*(order or ORDER))


def _upto(w: Window) -> Window:
    return w.rowsBetween(Window.unboundedPreceding, Window.currentRow)


def _whole(w: Window) -> Window:
    """All of ``w``'s partition: an unordered aggregate over an ordered spec, so that it
    shares the ordered spec's window operator (and its sort)."""
    return w.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)


def _peers(w: Window) -> Window:
    """The rows of ``w``'s partition that tie with the current row in ``w``'s order: a
    group within the partition, without a window (and a sort) of its own."""
    return w.rangeBetween(Window.currentRow, Window.currentRow)


def _by(*extra: str | Column) -> Window:
    return Window.partitionBy(*KEY, *extra)


def _differ(c: Column, w: Window) -> Column:
    """Does ``c`` take more than one value (nulls aside) over ``w``: a countDistinct(c) > 1
    that a window can compute."""
    return F.min(c).over(w) != F.max(c).over(w)


def decide(events: DataFrame, options: Options = Options()) -> Decided:
    """Detection codes per trace (module docstring); ``options`` give the bounds of
    realtime-latency and rate.

    One query: the events are hash-partitioned by trace once, every feature is a window
    keyed by the trace plus something (no further shuffle), each event gets its flags as
    bits, and one aggregation by trace ORs them and counts the facts. The featured events
    and the per-trace table are cached: the exact checks and the report read them again.
    On a small data set each further shuffle, join or checkpoint is a stage of its own,
    and stages are what such a scan costs (docs/spark.md).

    Each step below is one ``select`` whose windows share one ordered spec per partition
    key (an unordered aggregate takes the ordered spec with a whole-partition frame, a
    group within the partition a peers frame): Spark builds one window operator per spec,
    and each operator sorts its input unless its child's order already fits. The steps
    are ordered so that the two over a process's local order follow each other (one
    sort for both): 11 window operators and 9 sorts with the default options."""
    kind = F.col("kind")
    is_send, is_del, is_view = kind == "send", kind == "deliver", kind == "view"
    first = F.col("_n_del") == 1  # the first delivery of its message at its process
    wp = _w("process")  # a process's local order
    upto, whole = _upto(wp), _whole(wp)
    before = wp.rowsBetween(Window.unboundedPreceding, -1)
    after = wp.rowsBetween(1, Window.unboundedFollowing)
    e = events.select("*", F.coalesce("seq", F.lit(-1)).alias("_o_seq")).repartition(*KEY)
    # per (process, msg) in local order: is a delivery the first of its message there
    pm = _w("process", "msg")
    e = e.select(
        "*",
        F.when(is_del, F.count(F.when(is_del, 1)).over(_upto(pm))).alias("_n_del"),
        F.bool_or(is_del).over(_whole(pm)).alias("_delivers"))
    # a process's own order: its view, its sends, its seq, whether it crashes
    e = e.select(
        "*",
        F.last("view", ignorenulls=True).over(upto).alias("curview"),
        F.first("view", ignorenulls=True).over(after).alias("nextview"),
        (F.count(F.when(is_send, 1)).over(upto) - 1).alias("s_rank"),
        F.lag("seq").over(wp).alias("_prev_seq"),
        (F.row_number().over(wp) == 1).alias("_proc_first"),
        F.count("seq").over(whole).alias("_n_seq"),
        F.count(F.lit(1)).over(whole).alias("_n_proc"),
        F.bool_or(kind == "crash").over(whole).alias("_crashed"),
    )
    # seq: all or nothing per process, never repeated (else the trace is bad input)
    seq_problem = (
        F.when((F.col("_n_seq") > 0) & (F.col("_n_seq") < F.col("_n_proc"))
               & F.col("seq").isNull(),
               F.concat(F.lit("process "), "process", F.lit(" gives seq on some events only")))
        .when(F.col("seq") == F.col("_prev_seq"),
              F.concat(F.lit("process "), "process", F.lit(" repeats seq "),
                       F.col("seq").cast("string"))))
    # the same local order again (no sort: the rows are in it): a process's first
    # deliveries in order; and per trace (a prefix of that order), a bad seq anywhere
    e = e.select(
        "*", first.alias("first"), seq_problem.alias("_seq_problem"),
        F.when(first, F.count(F.when(first, 1)).over(upto) - 1).alias("f_pos"),
        F.last(F.when(first, F.struct("msg", "curview")), ignorenulls=True).over(before)
        .alias("_prev"),
        F.bool_or(seq_problem.isNotNull()).over(_by()).alias("_bad"),
    )
    first = F.col("first")
    # a view transition V -> V' (at the view events, and at the deliveries between them):
    # its installers against the deliverers of each message (a group by message); and a
    # view installed twice by one process (the previous installer of that view id is the
    # same), one view id with two member sets
    tkv = F.when(is_view, F.col("view")).when(first, F.col("curview"))
    tr = _w(tkv, "nextview", order=["msg"])
    vw = _w("view", order=["process"])
    e = e.select(
        "*",
        F.count(F.when(is_view & F.col("nextview").isNotNull(), 1)).over(_whole(tr))
        .alias("_n_members"),
        F.count(F.when(first, 1)).over(_peers(tr)).alias("_c"),
        (is_view & (F.lag("process").over(vw) == F.col("process"))).alias("_reinstall"),
        _differ(F.when(is_view, F.array_sort(F.array_distinct("members"))), _whole(vw))
        .alias("_members_differ"),
    )
    # per message (ordered by the delivering view, a group within it): a message's first
    # send (of the process first by name, earliest in its order); its deliverers; its
    # order-consistency rank; per view, the predecessors it has (strong total order: each
    # first delivery's predecessor in its view)
    send = F.struct(F.col("process").alias("sender"), F.col("s_rank").alias("send_rank"),
                    F.col("curview").alias("send_view"), F.col("time").alias("send_time"),
                    F.col("real_time").alias("send_real_time"),
                    F.col("deps").alias("send_deps"))
    prev = F.col("_prev")
    pred = F.when(prev.isNotNull() & prev["curview"].eqNullSafe(F.col("curview")), prev["msg"])
    wm = _whole(_w("msg", order=["curview"]))
    e = e.select(
        "*",
        F.count(F.when(is_send, 1)).over(wm).alias("n_sends"),
        F.min_by(F.when(is_send, send), F.when(is_send, F.struct("process", *ORDER)))
        .over(wm).alias("_s"),
        _differ(F.when(first, F.coalesce("curview", F.lit("\0"))), wm).alias("_two_views"),
        F.count(F.when(first, 1)).over(wm).alias("_got_all"),
        F.count(F.when(first & ~F.col("_crashed"), 1)).over(wm).alias("_got"),
        F.max("f_pos").over(wm).alias("rank"),  # weak / global: the order-consistency rank
        _differ(F.when(first, F.coalesce(pred, F.lit(""))), _peers(_w("msg", order=["curview"])))
        .alias("_preds_differ"),
    )
    # per position among first deliveries, per (process, sender), and the local order
    # once more: divergence, FIFO's i-th delivery from a sender, the previous first
    # delivery's rank
    sender = F.col("_s.sender")
    # FIFO: the i-th first delivery from a sender, counted at the delivering process
    fifo_i = (F.count(F.when(first & sender.isNotNull(), 1))
              .over(_upto(_w("process", sender))) - 1)
    # rate: packets per (process, slot), and per window of K slots from a used slot
    pk = (kind == "packet") & ~F.coalesce(F.col("x_join"), F.lit(False))
    slot = F.floor("x_slot")
    if options.slot is not None:
        slot = F.coalesce(slot, F.ceil(F.col("time") / F.lit(options.slot) - F.lit(rate.EPS))
                          - F.lit(1))
    slot = F.when(pk, slot)
    placed = pk & slot.isNotNull()
    rate_over = F.lit(False)
    if options.rate_max is not None:
        rate_over = rate_over | (F.count(F.when(placed, 1)).over(
            _by("process", F.when(placed, slot))) > F.lit(options.rate_max))
    if options.rate_avg is not None and options.rate_window is not None:
        win = _by("process", placed).orderBy(slot).rangeBetween(0, options.rate_window - 1)
        rate_over = rate_over | (F.count(F.when(placed, 1)).over(win) > F.lit(options.rate_avg))
    e = e.select(
        "*", "_s.*",
        _differ(F.when(first, F.col("msg")), _by("f_pos")).alias("_diverge"),
        fifo_i.alias("_fifo_i"),
        F.last(F.when(first, F.col("rank")), ignorenulls=True).over(before).alias("_prev_rank"),
        slot.alias("_slot"), rate_over.alias("_rate_over"),
    )
    placed = pk & F.col("_slot").isNotNull()
    lat = F.col("real_time") - F.col("send_real_time")
    bound = realtime_latency.bound(options)
    row = {
        # integrity: a repeated delivery, a delivery of an unsent message, two sends
        "dup_delivery": F.col("_n_del") > 1,
        "unsent": first & (F.col("n_sends") == 0),
        "dup_send": is_send & (F.col("n_sends") > 1),
        "strong_bad": first & F.col("_preds_differ"),
        "inconsistent": first & (F.col("_prev_rank") >= F.col("rank")),
        # FIFO: the i-th delivery from a sender is its i-th send
        "fifo_bad": first & F.col("sender").isNotNull() & (F.col("_fifo_i") != F.col("send_rank")),
        # the views: installed twice, one id with two member sets, a transition some
        # installer of both does not deliver a message of, sent and delivered apart
        "vs_reinstalled": F.col("_reinstall"),
        "vs_mismatch": is_view & F.col("_members_differ"),
        "vs_same_set": first & F.col("curview").isNotNull() & F.col("nextview").isNotNull()
        & (F.col("_n_members") > 0) & (F.col("_c") < F.col("_n_members")),
        "vs_sending_view": first & F.col("sender").isNotNull()
        & ~F.col("send_view").eqNullSafe(F.col("curview")),
        "two_views": first & F.col("_two_views"),
        "diverge": first & F.col("_diverge"),
        # validity: a correct sender that never delivers its own message
        "valid_bad": is_send & ~F.col("_crashed") & ~F.col("_delivers"),
        "rt_measured": first & lat.isNotNull(),
        "rt_over": first & (lat > F.lit(bound if bound is not None else float("inf"))),
        "has_packet": pk,
        # a trace that declares its reservations (negotiate records) is judged against
        # them by tomkit check's exact check only: the SQL form says unknown
        "has_negotiate": kind == "negotiate",
        "rate_unplaced": pk & F.col("_slot").isNull(),
        "rate_bad": placed & F.col("_rate_over"),
    }
    # the events' flags as the bits of one int: a trace's flags are the OR of its events'
    flags = list(row)
    bits = reduce(Column.__add__, (F.when(F.coalesce(row[n], F.lit(False)), F.lit(1 << i))
                                   .otherwise(F.lit(0)) for i, n in enumerate(flags)))
    x = e.select(*events.columns, "_o_seq", "first", "f_pos", "send_time",
                 "send_deps", "_bad", "_seq_problem", "_proc_first", "_crashed", "_got",
                 "_got_all", bits.alias("_flags")).cache()

    # causal: each dep of m delivered before m at the same process; the deps become
    # rows of their own beside the events (keyed by the dep), so that one window finds
    # the position of each dep's first delivery
    deps = F.when(first & (F.size(F.coalesce("send_deps", F.array().cast("array<string>")))
                           > 0), F.array_distinct("send_deps"))
    own = F.struct(F.lit(False).alias("need"), F.col("msg").alias("key"))
    items = F.when(deps.isNotNull(), F.concat(F.array(own), F.transform(
        deps, lambda d: F.struct(F.lit(True).alias("need"), d.alias("key"))))) \
        .otherwise(F.array(own))
    y = x.select("*", F.explode(items).alias("_i")).select("*", "_i.need")
    have = F.min(F.when(~F.col("need") & first, F.col("f_pos"))).over(
        _by("process", F.col("_i.key")))
    y = y.withColumn("causal_bad", F.col("need") & (have.isNull() | (have >= F.col("f_pos"))))
    ev = ~F.col("need")  # the event itself, not one of its deps
    t = y.groupBy(*KEY).agg(
        F.count(F.when(ev, 1)).alias("events"),
        F.bool_or(is_send).alias("has_send"),
        F.bool_or(is_del).alias("has_deliver"),
        F.bool_or(is_view).alias("has_view"),
        F.bool_or(kind == "leave").alias("has_leave"),
        F.bool_or(is_send & F.col("deps").isNotNull()).alias("has_deps"),
        F.bool_or(kind.isin("join", "leave", "crash")).alias("has_member"),
        # the rest of the facts an unknown reason may read (FACTS)
        F.bool_or(kind == "packet").alias("has_any_packet"),
        F.bool_or(F.col("time").isNotNull()).alias("has_time"),
        F.bool_or(F.col("real_time").isNotNull()).alias("has_real_time"),
        F.count(F.when(ev & F.col("_proc_first"), 1)).alias("n_proc"),
        F.count(F.when(ev & F.col("_proc_first") & ~F.col("_crashed"), 1)).alias("_n_correct"),
        # agreement: a message fewer correct processes deliver than there are
        F.min(F.when(first, F.col("_got"))).alias("_least_got"),
        # member-liveness: a sent message fewer processes deliver than there are
        F.min(F.when(is_send, F.col("_got_all"))).alias("_least_sent_got"),
        F.bit_or("_flags").alias("_flags"),
        F.bool_or("causal_bad").alias("causal_bad"),
        F.min_by(F.struct("src", "pos", F.col("_seq_problem").alias("message")),
                 F.when(F.col("_seq_problem").isNotNull(), F.struct("src", "pos")))
        .alias("_bad_seq"),
    )
    t = t.select("*", *((F.col("_flags").bitwiseAND(F.lit(1 << i)) != 0).alias(n)
                        for i, n in enumerate(flags)),
                 F.coalesce(F.col("_least_got") < F.col("_n_correct"), F.lit(False))
                 .alias("agree_bad"),
                 F.coalesce(F.col("_least_sent_got") < F.col("n_proc"), F.lit(False))
                 .alias("member_bad"))

    missing = [n for n in NAMES if n not in SQL_FORMS and n not in BY_EXACT_CHECK]
    if missing:
        raise ValueError(f"the scan decides {', '.join(missing)} but the SQL engine has no "
                         "DataFrame form for it: add one to SQL_FORMS, or name it in "
                         "BY_EXACT_CHECK (checker/spark/properties.py)")
    t = t.select(*KEY, "events", "_bad_seq", *dict.fromkeys(["has_send", *FACTS.values()]), *(
        (SQL_FORMS[n](options) if n in SQL_FORMS else _code(exact=F.lit(True))).alias(n)
        for n in NAMES)).cache()
    codes = t.filter(F.col("_bad_seq").isNull()).drop("_bad_seq")
    bad_seq = t.filter(F.col("_bad_seq").isNotNull()).select(
        *KEY, "_bad_seq.src", "_bad_seq.pos", "_bad_seq.message",
        F.col("events").alias("records"))
    good = x.filter(~F.col("_bad"))
    return Decided(codes, good.filter(first), bad_seq, good, cached=[x, t])


def _code(violated: Column | None = None, unknown: Column | None = None,
          exact: Column | None = None) -> Column:
    """A detection code column: violated over exact over unknown over holds."""
    c: Column = F.lit(HOLDS)
    if unknown is not None:
        c = F.when(unknown, F.lit(UNKNOWN)).otherwise(c)
    if exact is not None:
        c = F.when(exact, F.lit(EXACT)).otherwise(c)
    if violated is not None:
        c = F.when(violated, F.lit(VIOLATED)).otherwise(c)
    return c


def _rt_latency(options: Options) -> Column:
    if realtime_latency.bound(options) is None:
        return _code(unknown=F.lit(True))
    # a reused id's first send is its earliest in real time (latency.py): the exact check's
    return _code(_c("rt_over") & _c("rt_measured") & ~_c("dup_send"),
                 ~_c("rt_measured") & ~_c("dup_send"), _c("dup_send"))


def _rate(options: Options) -> Column:
    if rate.problem(options) is not None:  # no reservation, or a bad one
        return _code(unknown=F.lit(True))
    return _code(_c("rate_bad") & _c("has_packet") & ~_c("has_negotiate"),
                 ~_c("has_packet") | _c("has_negotiate"), _c("rate_unplaced"))


_c = F.col

#: each property's DataFrame form, by the property's name in the registry: its code
#: column, from the per-trace flags ``decide`` joins (module docstring) and the options
SQL_FORMS: dict[str, Callable[[Options], Column]] = {
    "integrity": lambda o: _code(
        _c("dup_delivery") | (_c("unsent") & _c("has_send")) | _c("dup_send"),
        ~_c("has_send") & _c("has_deliver")),
    "total-order-weak": lambda o: _code(exact=_c("inconsistent")),
    "total-order-strong": lambda o: _code(_c("strong_bad")),
    "prefix-order": lambda o: _code(_c("diverge") & ~_c("has_view"), exact=_c("has_view")),
    "global-order": lambda o: _code(exact=_c("inconsistent")),
    # a reused id (dup_send) is one message with several sends for causal and FIFO order
    # (causal.py, fifo.py): the query ranks its first send only, so the exact check decides
    "causal-order": lambda o: _code(
        _c("causal_bad") & _c("has_send") & _c("has_deps") & ~_c("dup_send"),
        ~_c("has_send") | ~_c("has_deps"), _c("dup_send") & _c("has_deps")),
    "fifo-order": lambda o: _code(_c("fifo_bad") & _c("has_send") & ~_c("dup_send"),
                                  ~_c("has_send"), _c("dup_send")),
    # self inclusion and the order of view ids are the exact check's (view events are few)
    "view-agreement": lambda o: _code(
        (_c("vs_reinstalled") | _c("vs_mismatch")) & _c("has_view"), ~_c("has_view"),
        _c("has_view")),
    "same-view-delivery": lambda o: _code(_c("two_views") & _c("has_view"), ~_c("has_view")),
    # a reused id is sent in each of its sends' views (views.py): the exact check's
    "sending-view-delivery": lambda o: _code(
        _c("vs_sending_view") & _c("has_view") & ~_c("dup_send"), ~_c("has_view"),
        _c("dup_send") & _c("has_view")),
    "virtual-synchrony": lambda o: _code(
        _c("vs_same_set") & _c("has_view") & ~_c("vs_reinstalled"), ~_c("has_view"),
        _c("vs_reinstalled") & _c("has_view")),
    "agreement": lambda o: _code(_c("agree_bad") & ~_c("has_view") & ~_c("has_leave"),
                                 exact=_c("has_view") | _c("has_leave")),
    # a reused id: each sender's own send, and its witness, are the exact check's
    "validity": lambda o: _code(
        _c("valid_bad") & ~_c("has_view") & ~_c("has_leave") & _c("has_send") & ~_c("dup_send"),
        ~_c("has_send"), (_c("has_view") | _c("has_leave") | _c("dup_send")) & _c("has_send")),
    "member-liveness": lambda o: _code(
        _c("member_bad") & ~_c("has_member") & _c("has_send"), ~_c("has_send"),
        _c("has_member") & _c("has_send")),
    "realtime-latency": _rt_latency,
    "rate": _rate,
    # view events are few: a trace with them goes to the exact check, as in its detect
    "view-sequence": lambda o: _code(unknown=~_c("has_view"), exact=_c("has_view")),
}

#: properties the scan decides without a DataFrame form: the SQL engine hands every
#: trace to the exact check (``exact.py``) for them (view events are few)
BY_EXACT_CHECK: frozenset[str] = frozenset()


#: the per-trace facts a property's ``reason`` may read (``Chunk.trace_has``'s keys), by
#: the column of ``decide``'s per-trace table that holds them
FACTS: dict[str, str] = {"send": "has_send", "deliver": "has_deliver", "view": "has_view",
                         "deps": "has_deps", "packet": "has_any_packet",
                         "time": "has_time", "real_time": "has_real_time"}


class _Facts:
    """One trace's facts where a property's ``reason`` looks for them in a chunk
    (``chunk.trace_has[key][ti]``, trace index 0), so that the registry's reason serves the
    Spark engines too; it notes which facts were read. A fact not given reads False and a
    fact the engines do not hold (not in FACTS) is an error naming it."""

    def __init__(self, name: str, given: Mapping[str, bool]):
        self._name, self._given, self.read = name, given, []
        self.trace_has = self

    def __getitem__(self, key: str) -> list[bool]:
        if key not in FACTS:
            raise ValueError(f"the unknown reason of {self._name} reads the trace fact "
                             f"{key!r}, which the Spark engines do not hold per trace: add it "
                             "to FACTS (checker/spark/properties.py) and to decide's table")
        self.read.append(key)
        return [bool(self._given.get(key, False))]

    def __getattr__(self, attr: str):
        raise ValueError(f"the unknown reason of {self._name} reads the chunk's {attr!r}; the "
                         "Spark engines give a reason the trace's facts only (FACTS, "
                         "checker/spark/properties.py)")


def _reason_of(name: str, facts: Mapping[str, bool], options: Options) -> tuple[str, list[str]]:
    prop = properties()[name]
    if prop.reason is None:  # as checker/engine.py says it
        return "not decidable", []
    f = _Facts(name, facts)
    return prop.reason(f, 0, options), f.read


def unknown_reason(name: str, facts: Mapping[str, bool], options: Options = Options()) -> str:
    """Why a trace the detection calls UNKNOWN is unknown: the registry's ``Property.reason``
    (the words of the reference check, as ``tomkit check`` gives them) for a trace with
    ``facts`` (FACTS' keys: does it have sends, views, ...). A reason that reads a fact
    ``facts`` does not give is a ValueError: the caller must carry that fact."""
    text, read = _reason_of(name, facts, options)
    missing = sorted(set(read) - set(facts))
    if missing:
        raise ValueError(f"the unknown reason of {name} depends on the trace fact(s) "
                         f"{', '.join(missing)}, which the caller does not give")
    return text


def reason_column(name: str, options: Options = Options(),
                  columns: Collection[str] | None = None) -> Column:
    """``unknown_reason`` as a column over the per-trace fact columns (FACTS' values): a
    decision on each fact the reason reads, found by asking it. ``columns``: the columns
    the frame has (default: all of FACTS'); a reason that reads a fact not among them is a
    ValueError."""

    def tree(given: dict[str, bool]) -> Column:
        text, read = _reason_of(name, given, options)
        open_ = [k for k in read if k not in given]
        if not open_:
            return F.lit(text)
        k = open_[0]
        if columns is not None and FACTS[k] not in columns:
            raise ValueError(f"the unknown reason of {name} depends on the trace fact {k!r}, "
                             f"which this engine's codes do not carry ({FACTS[k]})")
        return F.when(F.col(FACTS[k]), tree({**given, k: True})) \
            .otherwise(tree({**given, k: False}))

    return tree({})
