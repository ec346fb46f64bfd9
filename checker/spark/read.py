"""Reading a trace data set into one DataFrame of events, with every bad record accounted for.

Input: directories or files of trace format v1 (``traces/schema.py``), Parquet or JSON
Lines (plain or gzip), with or without Hive-style partitions ``protocol=P/config=C``
(what ``tomkit generate`` writes; files and folders starting with ``_`` or ``.`` are
skipped, as Spark does). Object-store and HDFS paths work as Spark reads them.

Where each record came from. Every event keeps its file (``src``) and position
(``pos``): for Parquet the 0-based row in the file (Spark's ``_metadata.row_index``); for
JSON Lines the 1-based line. Spark reads a text file in splits and numbers rows only
within a task, so the line is rebuilt: per (file, split start) the count of lines and the
first row id, a running sum over the splits of each file, and the row's offset in its
split. Positions also give a process's local order when records carry no ``seq``, as in
the single-machine reader (record order is local order).

Bad records are never dropped silently: each becomes a row of the ``rejected`` frame
(source, line or row, field, message) and is left out of the events. The rules are those
of the JSON Schema (required fields, kinds, which fields each kind may carry, non-empty
strings, seq >= 0) and, for JSON Lines, malformed JSON, a value of the wrong type (Spark's
corrupt-record column) and unknown fields (only ``x_*`` extensions are allowed).

Schema mismatch (a column of the wrong type, a required column missing, files whose
schemas cannot be merged) is not a bad record but a bad data set: :class:`SchemaMismatch`
names the column, the type found and the type expected.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tomkit.checker.spark.footers import Mismatch, read_footers
from tomkit.traces.schema import FIELDS, KINDS, MSG_KINDS, REQUIRED

PARTITIONS = ("protocol", "config")
KEY = ["protocol", "config", "trace"]  # one trace: its id within its partition
INDEX_OF_LATENCY = "x_index_of_latency"

STRING = ("trace", "process", "kind", "msg", "view")
LISTS = ("deps", "members")
_NUMERIC = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType)
_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)

JSON_SCHEMA = T.StructType(
    [T.StructField(f, T.StringType()) for f in STRING]
    + [T.StructField(f, T.ArrayType(T.StringType())) for f in LISTS]
    + [T.StructField("time", T.DoubleType()), T.StructField("seq", T.LongType()),
       T.StructField("real_time", T.DoubleType()),
       T.StructField("_corrupt", T.StringType())])
#: the extension field the chunk reads (a time slot: checker/chunk.py), as a double column
SLOT = "x_slot"
JOIN = "x_join"  # a packet outside the reservation (checker/properties/rate.py)
#: a negotiate record's declared reservation (checker/properties/rate.py), as doubles,
#: and whether it is a renegotiation
RESERVE = ("x_rate_max", "x_rate_avg", "x_rate_window")
RN = "x_rn"
#: the extension columns the scan reads (every other one it leaves alone)
USED_EXTENSIONS = (INDEX_OF_LATENCY, SLOT, JOIN, *RESERVE, RN)


class SchemaMismatch(ValueError):
    """The data set's columns do not fit trace format v1."""


@dataclass
class Events:
    """Good events (one row per record) and rejected records."""

    events: DataFrame  # KEY + process kind msg deps view members time seq src pos iol
    #                    real_time x_slot x_join x_rate_max x_rate_avg x_rate_window x_rn
    rejected: DataFrame  # src line row field message
    fmt: str


def data_files(spark: SparkSession, paths: list[str]) -> Iterator[tuple[Any, Any, list[str]]]:
    """(qualified root, Hadoop FileStatus, path components below the root) of every data
    file below ``paths``, skipping names that start with ``_`` or ``.`` as Spark does
    (_SUCCESS, _ground_truth.jsonl, .crc). A missing path is a FileNotFoundError."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for p in paths:
        path = jvm.org.apache.hadoop.fs.Path(p)
        fs = path.getFileSystem(conf)
        if not fs.exists(path):
            raise FileNotFoundError(f"{p}: no such file or directory")
        root = fs.makeQualified(path)
        prefix = root.toUri().getPath().rstrip("/")
        it = fs.listFiles(path, True)
        while it.hasNext():
            st = it.next()
            name = st.getPath().toUri().getPath()
            below = [x for x in name[len(prefix):].split("/") if x] \
                if name.startswith(prefix) else []
            below = below or [name.rsplit("/", 1)[-1]]  # the path is the file itself
            if not any(x.startswith(("_", ".")) for x in below):
                yield root, st, below


def format_of(name: str) -> str | None:
    """'parquet' or 'jsonl' by a file's name, or None."""
    low = name.lower()
    if low.endswith((".parquet", ".pq")):
        return "parquet"
    if low.endswith((".jsonl", ".json", ".ndjson", ".jsonl.gz", ".json.gz", ".ndjson.gz")):
        return "jsonl"
    return None


def detect_format(spark: SparkSession, paths: list[str], names=None) -> str:
    """'parquet' or 'jsonl', from the first data file's name (of ``names`` if given)."""
    if names is None:
        names = (below[-1] for _, _, below in data_files(spark, paths))
    for name in names:
        fmt = format_of(name)
        if fmt is not None:
            return fmt
    raise FileNotFoundError(f"{', '.join(paths)}: no .parquet or .jsonl file found")


def read_events(spark: SparkSession, paths: list[str], fmt: str | None = None) -> Events:
    fmt = fmt or detect_format(spark, paths)
    if fmt == "parquet":
        return _parquet(spark, paths)
    if fmt == "jsonl":
        return _jsonl(spark, paths)
    raise ValueError(f"unknown format {fmt!r}")


def _partition_cols(df: DataFrame) -> list[Column]:
    return [F.col(c).cast("string") if c in df.columns else F.lit("").alias(c)
            for c in PARTITIONS]


def _check_parquet_schema(schema: T.StructType, where: str) -> None:
    fields = {f.name: f.dataType for f in schema.fields}
    for name in REQUIRED:
        if name not in fields:
            raise SchemaMismatch(f"{where}: required column '{name}' is missing "
                                 "(trace format v1)")
    for name, dt in fields.items():
        if name in PARTITIONS or name.startswith("x_"):
            continue
        if name not in FIELDS:
            raise SchemaMismatch(f"{where}: unknown column '{name}' of type "
                                 f"{dt.simpleString()} (trace format v1 has {', '.join(FIELDS)}"
                                 "; extension columns start with x_)")
        ok = {
            "time": isinstance(dt, _NUMERIC),
            "real_time": isinstance(dt, _NUMERIC),
            "seq": isinstance(dt, _INTEGRAL),
            "deps": isinstance(dt, T.ArrayType) and isinstance(dt.elementType, T.StringType),
            "members": isinstance(dt, T.ArrayType) and isinstance(dt.elementType,
                                                                   T.StringType),
        }.get(name, isinstance(dt, T.StringType))
        if not ok:
            want = {"time": "double", "real_time": "double", "seq": "bigint",
                    "deps": "array<string>", "members": "array<string>"}.get(name, "string")
            raise SchemaMismatch(f"{where}: column '{name}' has type {dt.simpleString()}, "
                                 f"expected {want} (trace format v1)")


def check_parquet_schema(spark: SparkSession, paths: list[str]) -> DataFrame:
    """The data set as Spark reads it, its merged schema checked (:class:`SchemaMismatch`)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
        raw = spark.read.option("mergeSchema", "true").parquet(*paths)
        _check_parquet_schema(raw.schema, ", ".join(paths))
    except (PySparkException, Py4JJavaError) as e:
        # a failed merge of two files' schemas comes as a bare Py4JJavaError
        msg = (str(e.java_exception.getMessage()) if isinstance(e, Py4JJavaError)
               else str(e)).strip().splitlines()
        msg = "\n".join(msg[:6])
        raise SchemaMismatch(f"{', '.join(paths)}: the Parquet files' schemas do not fit "
                             f"together or do not fit trace format v1: {msg}") from e
    return raw


def parquet_frames(spark: SparkSession, paths: list[str]
                   ) -> tuple[T.StructType, list[DataFrame]]:
    """The data set's merged schema, checked (:class:`SchemaMismatch`), and the frames that
    read it: on the local disk the schema comes from the files' footers through pyarrow
    and Spark reads with it, one frame per group of files (``footers.py``); elsewhere, or
    for a schema only Spark reads exactly, Spark merges the footers itself (one frame)."""
    where = ", ".join(paths)
    try:
        found = read_footers(paths, USED_EXTENSIONS, PARTITIONS)
    except Mismatch as e:
        raise SchemaMismatch(f"{where}: the Parquet files' schemas do not fit together: "
                             f"{e}") from e
    if found is None:
        raw = check_parquet_schema(spark, paths)
        return raw.schema, [raw]
    _check_parquet_schema(found.merged, where)
    frames = []
    for g in found.groups:
        reader = spark.read.schema(g.schema)
        if g.base is not None:  # files of a root: its partitions are found from there
            reader = reader.option("basePath", g.base)
        frames.append(reader.parquet(*g.paths))
    return found.merged, frames


def _parquet(spark: SparkSession, paths: list[str]) -> Events:
    schema, frames = parquet_frames(spark, paths)
    return _split(reduce(DataFrame.unionByName, [_parquet_columns(raw, schema)
                                                 for raw in frames]), "parquet")


def _parquet_columns(raw: DataFrame, schema: T.StructType) -> DataFrame:
    """The events' columns of a Parquet frame ``raw``, whose data set has the merged
    ``schema`` (a column the frame lacks is null)."""
    cols = set(raw.columns)
    types = {f.name: f.dataType for f in schema.fields}

    def col(name: str, dt: str) -> Column:
        return F.col(name).cast(dt).alias(name) if name in cols else F.lit(None).cast(dt).alias(
            name)

    def typed(name: str, kinds: tuple, dt: str) -> Column:
        ok = name in cols and isinstance(types.get(name), kinds)
        return (F.col(name).cast(dt) if ok else F.lit(None).cast(dt)).alias(name)

    return raw.select(
        *_partition_cols(raw),
        *[col(f, "string") for f in STRING],
        col("deps", "array<string>"), col("members", "array<string>"),
        col("time", "double"), col("seq", "bigint"),
        (F.col(INDEX_OF_LATENCY).cast("double") if INDEX_OF_LATENCY in cols
         else F.lit(None).cast("double")).alias("iol"),
        F.col("_metadata.file_path").alias("src"),
        F.col("_metadata.row_index").alias("pos"),
        col("real_time", "double"),
        typed(SLOT, _NUMERIC, "double"),
        typed(JOIN, (T.BooleanType,), "boolean"),
        *[typed(r, _NUMERIC, "double") for r in RESERVE],
        typed(RN, (T.BooleanType,), "boolean"),
        F.lit(None).cast("string").alias("_corrupt"),
        F.lit(None).cast("string").alias("_unknown_key"),
    )


def _jsonl(spark: SparkSession, paths: list[str]) -> Events:
    text = spark.read.text(paths)
    df = text.select(
        *_partition_cols(text), "value",
        F.col("_metadata.file_path").alias("src"),
        F.col("_metadata.file_block_start").alias("_block"),
        F.monotonically_increasing_id().alias("_id"))
    # line numbers: rows of one split are consecutive ids in one task
    splits = df.groupBy("src", "_block").agg(F.count(F.lit(1)).alias("_n"),
                                             F.min("_id").alias("_first"))
    w = Window.partitionBy("src").orderBy("_block").rowsBetween(Window.unboundedPreceding, -1)
    splits = splits.withColumn("_before", F.coalesce(F.sum("_n").over(w), F.lit(0)))
    df = df.join(F.broadcast(splits.drop("_n")), ["src", "_block"])
    df = df.withColumn("pos", F.col("_before") + F.col("_id") - F.col("_first") + 1)
    header = (F.col("pos") == 1) & F.get_json_object("value", "$.format").isNotNull()
    df = df.filter(~header & (F.trim("value") != ""))
    parsed = F.from_json("value", JSON_SCHEMA, {"mode": "PERMISSIVE",
                                                "columnNameOfCorruptRecord": "_corrupt"})
    allowed = F.array(*[F.lit(f) for f in FIELDS])
    unknown = F.filter(F.json_object_keys("value"),
                       lambda k: ~F.array_contains(allowed, k) & ~k.startswith("x_"))
    df = df.select("protocol", "config", "src", "pos", parsed.alias("j"),
                   F.get_json_object("value", f"$.{INDEX_OF_LATENCY}").cast("double")
                   .alias("iol"),
                   F.get_json_object("value", f"$.{SLOT}").cast("double").alias(SLOT),
                   (F.get_json_object("value", f"$.{JOIN}") == "true").alias(JOIN),
                   *[F.get_json_object("value", f"$.{r}").cast("double").alias(r)
                     for r in RESERVE],
                   (F.get_json_object("value", f"$.{RN}") == "true").alias(RN),
                   F.try_element_at(unknown, F.lit(1)).alias("_unknown_key"),
                   F.json_object_keys("value").isNull().alias("_not_object"))
    df = df.select("protocol", "config", *[F.col(f"j.{f}").alias(f) for f in STRING],
                   "j.deps", "j.members", "j.time", "j.seq", "iol", "src", "pos",
                   "j.real_time", SLOT, JOIN, *RESERVE, RN,
                   F.when(F.col("_not_object") & F.col("j._corrupt").isNull(),
                          F.lit("not an object")).otherwise(F.col("j._corrupt"))
                   .alias("_corrupt"), "_unknown_key")
    # Parsed once, here: the rules of ``problem`` read the parsed fields some 30 times,
    # and Spark pushes the filter on them below this projection, inlining ``from_json``
    # into each use (measured: 30 parses a line, JSON Lines at 1/23 the speed of Parquet).
    # Checkpointed, the good and the rejected records also share the one parse.
    return _split(df.localCheckpoint(), "jsonl")


def _empty(c: str) -> Column:
    return F.col(c).isNull() | (F.col(c) == "")


def _bad_items(c: str) -> Column:
    return F.exists(F.col(c), lambda x: x.isNull() | (x == ""))


def problem(kind_set=KINDS) -> Column:
    """The first broken rule of a record, as struct(field, message), by field order; null
    for a good record."""
    kinds = F.array(*[F.lit(k) for k in kind_set])
    msg_kinds = F.array(*[F.lit(k) for k in sorted(MSG_KINDS)])
    kind = F.col("kind")
    is_msg = F.array_contains(msg_kinds, kind)
    rules: list[tuple[Column, str, Column | str]] = [
        (F.col("_corrupt").isNotNull(), "", "not a valid JSON object, or a field of the "
                                            "wrong type"),
        (F.col("_unknown_key").isNotNull(), F.col("_unknown_key"),
         "unknown field (extension fields start with x_)"),
        (_empty("trace"), "trace", "required: a non-empty string"),
        (_empty("process"), "process", "required: a non-empty string"),
        (kind.isNull(), "kind", "required"),
        (~F.array_contains(kinds, kind), "kind", F.concat(F.lit("must be one of "
                                                               + ", ".join(kind_set)
                                                               + ", not "), kind)),
        (is_msg & _empty("msg"), "msg", F.concat(F.lit("required for kind "), kind)),
        (~is_msg & F.col("msg").isNotNull(), "msg", F.concat(F.lit("not allowed for kind "),
                                                             kind)),
        ((kind != "send") & F.col("deps").isNotNull(), "deps", "allowed on send only"),
        (F.coalesce(_bad_items("deps"), F.lit(False)), "deps",
         "items must be non-empty strings"),
        ((kind == "view") & _empty("view"), "view", "required for kind view"),
        ((kind != "view") & F.col("view").isNotNull(), "view", "allowed on view only"),
        ((kind == "view") & F.col("members").isNull(), "members", "required for kind view"),
        ((kind != "view") & F.col("members").isNotNull(), "members", "allowed on view only"),
        (F.coalesce(_bad_items("members"), F.lit(False)), "members",
         "items must be non-empty strings"),
        (F.col("time").isNotNull() & (F.isnan("time") | (F.abs("time") == float("inf"))),
         "time", "must be a finite number"),
        (F.col("seq") < 0, "seq", "must be >= 0"),
        (F.col("real_time").isNotNull()
         & (F.isnan("real_time") | (F.abs("real_time") == float("inf"))),
         "real_time", "must be a finite number"),
    ]
    out = F.lit(None).cast("struct<field:string,message:string>")
    for cond, field, message in reversed(rules):
        f = F.lit(field) if isinstance(field, str) else field
        m = F.lit(message) if isinstance(message, str) else message
        out = F.when(F.coalesce(cond, F.lit(False)),
                     F.struct(f.alias("field"), m.alias("message"))).otherwise(out)
    return out


def _split(df: DataFrame, fmt: str) -> Events:
    df = df.withColumn("_problem", problem())
    good = df.filter(F.col("_problem").isNull()).drop("_problem", "_corrupt", "_unknown_key")
    bad = df.filter(F.col("_problem").isNotNull()).select(
        "src",
        (F.col("pos") if fmt == "jsonl" else F.lit(None)).cast("long").alias("line"),
        (F.col("pos") if fmt == "parquet" else F.lit(None)).cast("long").alias("row"),
        "_problem.field", "_problem.message")
    return Events(good, bad, fmt)
