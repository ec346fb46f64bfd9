"""The default safety properties as DataFrame operations: one detection code per trace.

The same properties, names and codes as ``checker/properties`` (HOLDS, UNKNOWN,
VIOLATED, EXACT; see each module's docstring for the definition and its source). The
events are hash-partitioned by trace once (``KEY``); every window and aggregate below is
keyed by the trace plus something, so Spark sorts within partitions but does not shuffle
again. Each test below marks the traces it finds (a flag); the flags are unioned and
aggregated by trace once (``_Flags``), and each property's code is a boolean formula over
them (``SQL_FORMS``). Per property, how it is decided here:

* integrity: aggregates. A delivery whose (trace, process, msg) already has an earlier
  one (row_number > 1); a first delivery whose message has no send, in a trace that logs
  sends; a (trace, msg) with two sends. Unknown: deliveries but no sends.
* total-order-strong: the property's own linear test (total_order.py): per process, the
  predecessor of each first delivery among the first deliveries in the same installed view
  (``lag`` over the process's order); violated when one (trace, view, msg) has two
  different predecessors.
* total-order-weak and global-order: the order-consistency filter of order_filter.py, one
  round: rank(m) = the largest position of m's first delivery at any process; a trace
  whose processes all deliver in increasing rank has a global sequence (the ranks), so
  both hold. Any other trace is EXACT, as in the single-machine engine: the exact check
  (``exact.py``) decides it. Cycle detection is not natural in SQL; the filter settles
  every trace without a violation in the data sets we generate (all processes deliver
  one sequence, or a prefix of it).
* causal-order: each first delivery of m joined to the deps of m's first send (exploded),
  then to the same process's first delivery of each dep: violated if missing or not
  earlier. Unknown: no sends, or no send carries deps.
* fifo-order: per (trace, process, sender), the i-th first delivery must be the sender's
  i-th send (window row_number against the send rank). Unknown: no sends.
* prefix-order: per (trace, position among a process's first deliveries), more than one
  message is a divergence; a trace with views is EXACT (the check restricts each pair to
  the views both installed).
* view-agreement: aggregates over view events (a view installed twice by a process; one
  view id with two member sets); any other trace with views is EXACT (self inclusion and
  the order of view ids are the exact check's: view events are few).
* same-view-delivery: per (trace, msg), first deliveries in more than one view (no view
  counts as one).
* sending-view-delivery: the sending view against the delivering view.
* virtual-synchrony: same messages between the same two views (per transition V -> V',
  the processes that install both against the deliverers of each message in between);
  a trace with a view installed twice is EXACT, as in ``virtual_synchrony.detect``.
  Unknown (all four view properties): no view events.
* agreement (uniform) and validity: per (trace, msg), the correct processes (no crash
  record) that deliver it against the trace's correct processes; sends of correct
  processes their sender never delivers. A trace with views or a leave is EXACT: who
  owes a message then depends on membership (``agreement.py``).

* member-liveness: for a trace without join, leave or crash, every process delivers every
  sent message (the count of first deliveries per message against the trace's processes);
  any other trace with sends is EXACT (``member_liveness.py``: who owes a message depends
  on the join and the send). Unknown: no sends.
* realtime-latency: per first delivery, its real_time minus its send's, against the bound
  (``--realtime-bound``, else ``--latency-bound``). Unknown: no bound, or nothing measured.
* rate: packet records per (trace, process, slot), the slot from x_slot else from time and
  ``--slot``; a window of K slots is a range frame over the slot. A trace with a packet
  that cannot be placed is EXACT. Unknown: no reservation given, or no packets.

"First send" of a message is the one of the process first by name, earliest in its
order, and "first delivery" the earliest at a process, as in ``checker/chunk.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
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
    codes: DataFrame  # KEY, events, one int code column per property, bad (seq) info
    firsts: DataFrame  # first deliveries with send info, for the report
    bad_seq: DataFrame  # src pos field message of traces rejected for seq
    # the good traces' events with their per-process features (None: the files engine)
    events: DataFrame | None
    # set by arrow.decide_arrow, which settles these in its one pass (else job.py derives
    # them from ``events``): the reference-check results (exact.RESULT_SCHEMA) of the
    # flagged traces, and protocol, config, iol of the good traces' deliveries
    exact: DataFrame | None = None
    deliveries: DataFrame | None = None


def _w(*extra: str, order: list[str] | None = None) -> Window:
    return Window.partitionBy(*KEY, *extra).orderBy(*(order or ORDER))


class _Flags:
    """The per-trace flags of ``decide``: each a frame of the traces it marks (duplicates
    allowed). They are unioned and turned into one boolean column each by a single
    aggregation by trace, joined once to the per-trace table: a distinct and a join per
    flag cost a shuffle each (twenty-two of them, the most of the SQL engine's jobs on a
    small data set, docs/spark.md)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._frames: list[DataFrame] = []

    def __call__(self, df: DataFrame, name: str) -> None:
        self.names.append(name)
        self._frames.append(df.select(*KEY, F.lit(name).alias("_flag")))

    def onto(self, traces: DataFrame) -> DataFrame:
        """``traces`` with a boolean column per flag, False where unmarked."""
        marked = reduce(DataFrame.unionByName, self._frames).groupBy(*KEY).agg(
            *(F.max(F.col("_flag") == F.lit(n)).alias(n) for n in self.names))
        return traces.join(marked, KEY, "left").na.fill(False)


def decide(events: DataFrame, options: Options = Options()) -> Decided:
    """Detection codes per trace (module docstring); ``options`` give the bounds of
    realtime-latency and rate."""
    e = events.withColumn("_o_seq", F.coalesce("seq", F.lit(-1))).repartition(*KEY)
    wp = _w("process")
    upto = wp.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    after = wp.rowsBetween(1, Window.unboundedFollowing)
    e = e.select(
        "*",
        F.last("view", ignorenulls=True).over(upto).alias("curview"),
        F.first("view", ignorenulls=True).over(after).alias("nextview"),
        (F.count(F.when(F.col("kind") == "send", 1)).over(upto) - 1).alias("s_rank"),
        F.lag("seq").over(wp).alias("_prev_seq"),
        F.count("seq").over(Window.partitionBy(*KEY, "process")).alias("_n_seq"),
        F.count(F.lit(1)).over(Window.partitionBy(*KEY, "process")).alias("_n_proc"),
    )
    # seq: all or nothing per process, never repeated (else the trace is bad input)
    seq_problem = (
        F.when((F.col("_n_seq") > 0) & (F.col("_n_seq") < F.col("_n_proc"))
               & F.col("seq").isNull(),
               F.concat(F.lit("process "), "process", F.lit(" gives seq on some events only")))
        .when(F.col("seq") == F.col("_prev_seq"),
              F.concat(F.lit("process "), "process", F.lit(" repeats seq "),
                       F.col("seq").cast("string"))))
    # Materialize the per-event features once: every property below reads them, and a
    # checkpoint cuts the plan (Spark's analyzer slows down sharply on a deep plan that
    # is joined with itself a dozen times). It keeps the partitioning by trace.
    e = e.withColumn("_seq_problem", seq_problem).localCheckpoint()
    bad_seq = (e.filter(F.col("_seq_problem").isNotNull())
               .groupBy(*KEY).agg(F.min_by(F.struct("src", "pos", "_seq_problem"),
                                           F.struct("src", "pos")).alias("b"))
               .select(*KEY, "b.src", "b.pos", F.col("b._seq_problem").alias("message")))
    bad_seq = bad_seq.join(e.join(bad_seq.select(*KEY), KEY).groupBy(*KEY)
                           .agg(F.count(F.lit(1)).alias("records")), KEY)
    e = e.join(bad_seq.select(*KEY).withColumn("_bad", F.lit(True)), KEY, "left") \
        .filter(F.col("_bad").isNull()).drop("_bad", "_seq_problem", "_prev_seq", "_n_seq",
                                             "_n_proc")

    is_send, is_del = F.col("kind") == "send", F.col("kind") == "deliver"
    flag = _Flags()
    traces = e.groupBy(*KEY).agg(
        F.count(F.lit(1)).alias("events"),
        F.max(is_send.cast("int")).cast("boolean").alias("has_send"),
        F.max(is_del.cast("int")).cast("boolean").alias("has_deliver"),
        F.max((F.col("kind") == "view").cast("int")).cast("boolean").alias("has_view"),
        F.max((F.col("kind") == "leave").cast("int")).cast("boolean").alias("has_leave"),
        F.max((is_send & F.col("deps").isNotNull()).cast("int")).cast("boolean")
        .alias("has_deps"),
        F.max(F.col("kind").isin("join", "leave", "crash").cast("int")).cast("boolean")
        .alias("has_member"),
        # the rest of the facts an unknown reason may read (FACTS)
        F.max((F.col("kind") == "packet").cast("int")).cast("boolean").alias("has_any_packet"),
        F.max(F.col("time").isNotNull().cast("int")).cast("boolean").alias("has_time"),
        F.max(F.col("real_time").isNotNull().cast("int")).cast("boolean")
        .alias("has_real_time"),
        F.countDistinct("process").alias("n_proc"))

    sends = e.filter(is_send).groupBy(*KEY, "msg").agg(
        F.count(F.lit(1)).alias("n_sends"),
        F.min_by(F.struct(F.col("process").alias("sender"), "s_rank",
                          F.col("curview").alias("send_view"), F.col("time").alias("send_time"),
                          F.col("real_time").alias("send_real_time"),
                          F.col("deps").alias("send_deps")),
                 F.struct("process", *ORDER)).alias("s"))
    sends = sends.select(*KEY, "msg", "n_sends", "s.*")

    d = e.filter(is_del).drop("s_rank").withColumn("_k", F.row_number().over(_w("process", "msg")))
    flag(d.filter(F.col("_k") > 1), "dup_delivery")
    f = d.filter(F.col("_k") == 1).drop("_k").join(sends, [*KEY, "msg"], "left")
    pf = _w("process")
    f = f.select("*", (F.row_number().over(pf) - 1).alias("f_pos"),
                 F.lag("msg").over(pf).alias("_prev_msg"),
                 F.lag("curview").over(pf).alias("_prev_view"),
                 F.lag(F.lit(1)).over(pf).alias("_has_prev"))
    f = f.withColumn("pred", F.when(F.col("_has_prev").isNotNull()
                                    & F.col("_prev_view").eqNullSafe(F.col("curview")),
                                    F.col("_prev_msg"))).drop("_prev_view", "_has_prev")
    f = f.localCheckpoint()

    # integrity
    flag(f.filter(F.col("n_sends").isNull()), "unsent")
    flag(sends.filter(F.col("n_sends") > 1), "dup_send")
    # strong total order: one predecessor per (trace, view, msg)
    flag(f.groupBy(*KEY, "curview", "msg")
                   .agg(F.countDistinct(F.coalesce("pred", F.lit(""))).alias("k"))
                   .filter(F.col("k") > 1), "strong_bad")
    # weak / global: one round of the order-consistency filter
    rank = f.groupBy(*KEY, "msg").agg(F.max("f_pos").alias("rank"))
    ranked = f.select(*KEY, "process", "msg", *ORDER).join(rank, [*KEY, "msg"])
    ranked = ranked.withColumn("_prev_rank", F.lag("rank").over(_w("process")))
    flag(ranked.filter(F.col("_prev_rank") >= F.col("rank")), "inconsistent")
    # causal: each dep of m delivered before m at the same process
    need = f.filter(F.size(F.coalesce("send_deps", F.array())) > 0).select(
        *KEY, "process", "f_pos", F.explode(F.array_distinct("send_deps")).alias("dep"))
    have = f.select(*KEY, "process", F.col("msg").alias("dep"), F.col("f_pos").alias("dep_pos"))
    flag(need.join(have, [*KEY, "process", "dep"], "left")
                       .filter(F.col("dep_pos").isNull() | (F.col("dep_pos") >= F.col("f_pos"))),
                       "causal_bad")
    # FIFO: the i-th delivery from a sender is its i-th send
    fs = f.filter(F.col("sender").isNotNull())
    flag(fs.withColumn("_i", F.row_number().over(
        _w("process", "sender", order=["f_pos"])) - 1).filter(F.col("_i") != F.col("s_rank")),
        "fifo_bad")
    # virtual synchrony
    v = e.filter(F.col("kind") == "view")
    flag(v.groupBy(*KEY, "process", "view").count().filter(F.col("count") > 1),
                        "vs_reinstalled")
    flag(v.groupBy(*KEY, "view")
                     .agg(F.countDistinct(F.array_sort(F.array_distinct("members"))).alias("k"))
                     .filter(F.col("k") > 1), "vs_mismatch")
    trans = v.filter(F.col("nextview").isNotNull()).groupBy(*KEY, "view", "nextview") \
        .agg(F.count(F.lit(1)).alias("n_members"))
    inside = f.filter(F.col("curview").isNotNull() & F.col("nextview").isNotNull()) \
        .groupBy(*KEY, F.col("curview").alias("view"), "nextview", "msg") \
        .agg(F.count(F.lit(1)).alias("c"))
    flag(inside.join(trans, [*KEY, "view", "nextview"])
                     .filter(F.col("c") < F.col("n_members")), "vs_same_set")
    flag(fs.filter(~F.col("send_view").eqNullSafe(F.col("curview"))),
                         "vs_sending_view")
    flag(f.groupBy(*KEY, "msg")
                      .agg(F.countDistinct(F.coalesce(F.col("curview"), F.lit("\0")))
                           .alias("k")).filter(F.col("k") > 1), "two_views")
    flag(f.groupBy(*KEY, "f_pos").agg(F.countDistinct("msg").alias("k"))
                    .filter(F.col("k") > 1), "diverge")
    # agreement (uniform) and validity, for traces without views or leaves (the others
    # are EXACT: who owes a message depends on membership)
    crashed = (e.filter(F.col("kind") == "crash").select(*KEY, "process").distinct()
               .withColumn("_crashed", F.lit(True)))
    n_correct = (e.select(*KEY, "process").distinct()
                 .join(crashed, [*KEY, "process"], "left").filter(F.col("_crashed").isNull())
                 .groupBy(*KEY).agg(F.count(F.lit(1)).alias("n_correct")))
    got = (f.join(crashed, [*KEY, "process"], "left").groupBy(*KEY, "msg")
           .agg(F.count(F.when(F.col("_crashed").isNull(), 1)).alias("got")))
    flag(got.join(n_correct, KEY, "left")
                      .filter(F.col("got") < F.coalesce(F.col("n_correct"), F.lit(0))),
                      "agree_bad")
    own = f.select(*KEY, "process", "msg").withColumn("_own", F.lit(True))
    flag(e.filter(is_send).join(crashed, [*KEY, "process"], "left")
                      .filter(F.col("_crashed").isNull())
                      .join(own, [*KEY, "process", "msg"], "left")
                      .filter(F.col("_own").isNull()), "valid_bad")

    # member-liveness, for traces without join, leave or crash (the others are EXACT: who
    # owes a message depends on the clocks of the join and the send): every process
    # delivers every sent message
    delivered = f.groupBy(*KEY, "msg").agg(F.count(F.lit(1)).alias("got"))
    flag(sends.join(delivered, [*KEY, "msg"], "left")
                       .join(traces.select(*KEY, "n_proc"), KEY)
                       .filter(F.coalesce("got", F.lit(0)) < F.col("n_proc")), "member_bad")
    # realtime-latency: first deliveries against their sends, in real time
    lat = F.col("real_time") - F.col("send_real_time")
    flag(f.filter(lat.isNotNull()), "rt_measured")
    bound = realtime_latency.bound(options)
    flag(f.filter(lat > F.lit(bound if bound is not None else float("inf"))),
                    "rt_over")
    # rate: packets per (process, slot) and per window of K slots starting at a used slot
    pk = e.filter((F.col("kind") == "packet") & ~F.coalesce(F.col("x_join"), F.lit(False)))
    flag(pk, "has_packet")
    # a trace that declares its reservations (negotiate records) is judged against them
    # by tomkit check's exact check only: the SQL form says unknown, never a false alarm
    flag(e.filter(F.col("kind") == "negotiate"), "has_negotiate")
    slot = F.floor("x_slot")
    if options.slot is not None:
        slot = F.coalesce(slot, F.ceil(F.col("time") / F.lit(options.slot) - F.lit(rate.EPS))
                          - F.lit(1))
    pk = pk.withColumn("_slot", slot)
    flag(pk.filter(F.col("_slot").isNull()), "rate_unplaced")
    per_slot = pk.filter(F.col("_slot").isNotNull()).groupBy(*KEY, "process", "_slot") \
        .agg(F.count(F.lit(1)).alias("n"))
    over = F.lit(False)
    if options.rate_max is not None:
        over = over | (F.col("n") > F.lit(options.rate_max))
    if options.rate_avg is not None and options.rate_window is not None:
        win = Window.partitionBy(*KEY, "process").orderBy("_slot") \
            .rangeBetween(0, options.rate_window - 1)
        per_slot = per_slot.withColumn("_win", F.sum("n").over(win))
        over = over | (F.col("_win") > F.lit(options.rate_avg))
    flag(per_slot.filter(over), "rate_bad")

    t = flag.onto(traces)

    missing = [n for n in NAMES if n not in SQL_FORMS and n not in BY_EXACT_CHECK]
    if missing:
        raise ValueError(f"the scan decides {', '.join(missing)} but the SQL engine has no "
                         "DataFrame form for it: add one to SQL_FORMS, or name it in "
                         "BY_EXACT_CHECK (checker/spark/properties.py)")
    codes = t.select(*KEY, "events", *dict.fromkeys(["has_send", *FACTS.values()]), *(
        (SQL_FORMS[n](options) if n in SQL_FORMS else _code(exact=F.lit(True))).alias(n)
        for n in NAMES))
    return Decided(codes.localCheckpoint(), f, bad_seq, e)


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
    return _code(_c("rt_over") & _c("rt_measured"), ~_c("rt_measured"))


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
    "causal-order": lambda o: _code(
        _c("causal_bad") & _c("has_send") & _c("has_deps"), ~_c("has_send") | ~_c("has_deps")),
    "fifo-order": lambda o: _code(_c("fifo_bad") & _c("has_send"), ~_c("has_send")),
    # self inclusion and the order of view ids are the exact check's (view events are few)
    "view-agreement": lambda o: _code(
        (_c("vs_reinstalled") | _c("vs_mismatch")) & _c("has_view"), ~_c("has_view"),
        _c("has_view")),
    "same-view-delivery": lambda o: _code(_c("two_views") & _c("has_view"), ~_c("has_view")),
    "sending-view-delivery": lambda o: _code(_c("vs_sending_view") & _c("has_view"),
                                             ~_c("has_view")),
    "virtual-synchrony": lambda o: _code(
        _c("vs_same_set") & _c("has_view") & ~_c("vs_reinstalled"), ~_c("has_view"),
        _c("vs_reinstalled") & _c("has_view")),
    "agreement": lambda o: _code(_c("agree_bad") & ~_c("has_view") & ~_c("has_leave"),
                                 exact=_c("has_view") | _c("has_leave")),
    "validity": lambda o: _code(
        _c("valid_bad") & ~_c("has_view") & ~_c("has_leave") & _c("has_send"), ~_c("has_send"),
        (_c("has_view") | _c("has_leave")) & _c("has_send")),
    "member-liveness": lambda o: _code(
        _c("member_bad") & ~_c("has_member") & _c("has_send"), ~_c("has_send"),
        _c("has_member") & _c("has_send")),
    "realtime-latency": _rt_latency,
    "rate": _rate,
}

#: properties the scan decides without a DataFrame form: the SQL engine hands every
#: trace to the exact check (``exact.py``) for them (view events are few)
BY_EXACT_CHECK: frozenset[str] = frozenset({"view-sequence"})


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
