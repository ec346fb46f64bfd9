"""The merged schema of a local Parquet data set, from its files' footers with pyarrow.

Spark finds a Parquet data set's schema by reading every file's footer and merging them
(``mergeSchema``): on a cold JVM that is a Spark job of its own and Catalyst's
``ResolveDataSource`` at its first use, about 3 of the SQL engine's CPU seconds on a
40-trace data set (docs/spark.md). Where the files are on the local disk, this module reads
the footers with pyarrow instead (the footers only: ``pyarrow.parquet.read_schema``) and
gives Spark the schema (``spark.read.schema``), so that Spark reads no footer before the
scan runs. Spark's own merge stays for every other store, and for any schema this module
does not read exactly as Spark's Parquet reader does (``spark_type``: a type outside its
table), so what a data set means never depends on the way its schema was found.

The merge follows Spark's (``StructType.merge``): a column keeps one type in every file
that has it, nullability aside; two files that give it different types do not fit
together, and the error names both files. Two things differ from Spark's merge, both as
``tomkit check`` reads a file:

* a column of Arrow type ``null`` (all null, as pyarrow writes an empty optional column)
  is absent from that file: Spark's reader takes it as a 32-bit integer column, so the
  files that have such columns are read apart, each group without them (``Group``), and
  their values are null;
* only the columns the scan reads are given to Spark: the format's fields and the
  extension columns ``read.py`` uses (``read.USED_EXTENSIONS``), so an extension column
  the scan never reads cannot stop it by its type.

A dictionary-encoded string column is a string column (Parquet stores the values, and
Spark reads them as strings).
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import types as T


class Mismatch(ValueError):
    """Two files give a column different types (the message names both)."""


#: the format's fields as the scan reads them, where a column is null in every file
FORMAT_TYPES: dict[str, T.DataType] = {
    **{f: T.StringType() for f in ("trace", "process", "kind", "msg", "view")},
    **{f: T.ArrayType(T.StringType()) for f in ("deps", "members")},
    "time": T.DoubleType(), "real_time": T.DoubleType(), "seq": T.LongType(),
}

_SCALARS: list[tuple[pa.DataType, T.DataType]] = [
    (pa.int8(), T.ByteType()), (pa.int16(), T.ShortType()), (pa.int32(), T.IntegerType()),
    (pa.int64(), T.LongType()), (pa.uint8(), T.ShortType()), (pa.uint16(), T.IntegerType()),
    (pa.uint32(), T.LongType()), (pa.float32(), T.FloatType()),
    (pa.float64(), T.DoubleType()), (pa.bool_(), T.BooleanType()),
    (pa.string(), T.StringType()), (pa.large_string(), T.StringType()),
]


def spark_type(t: pa.DataType) -> T.DataType | None:
    """The Spark type Spark's Parquet reader gives a column that pyarrow reads as ``t``
    (a dictionary as its values); None for the type ``null`` and for every type outside
    this table (the caller then leaves the schema to Spark)."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    for arrow, spark in _SCALARS:
        if t == arrow:
            return spark
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and t.value_type in (
            pa.string(), pa.large_string()):
        return T.ArrayType(T.StringType())
    return None


@dataclass
class Group:
    """Files that Spark reads with one schema: ``paths`` (the scan's inputs, or files
    below ``base`` when the data set is read in groups), ``schema`` the columns they are
    read with (those null in all of them left out)."""

    paths: list[str]
    base: str | None
    schema: T.StructType


@dataclass
class Footers:
    """A data set's merged schema (``merged``: every column the scan reads that some file
    has, the type Spark would merge) and the groups Spark reads it in."""

    merged: T.StructType
    groups: list[Group]


def is_local(path: str) -> bool:
    """A path on the local disk without asking Hadoop (no scheme, or ``file:``; no Hadoop
    configuration in the environment, which could make a bare path HDFS)."""
    if any(os.environ.get(v) for v in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")):
        return False
    return urllib.parse.urlsplit(path).scheme in ("", "file")


def _local(path: str) -> str:
    if path.startswith("file:"):
        return os.path.abspath(urllib.parse.unquote(urllib.parse.urlsplit(path).path))
    return os.path.abspath(path)


def list_local(roots: list[str]) -> list[tuple[str, str]]:
    """(root, file) of every file below the local paths ``roots``, skipping names that
    start with ``_`` or ``.`` below a root, as Spark does (_SUCCESS, .crc). A missing root
    is a FileNotFoundError."""
    out = []
    for root in roots:
        if os.path.isfile(root):
            out.append((root, root))
            continue
        if not os.path.isdir(root):
            raise FileNotFoundError(f"{root}: no such file or directory")
        for d, dirs, names in os.walk(root):
            dirs[:] = sorted(x for x in dirs if not x.startswith(("_", ".")))
            out += [(root, os.path.join(d, n)) for n in sorted(names)
                    if not n.startswith(("_", "."))]
    return out


def read_footers(paths: list[str], wanted: Iterable[str], partitions: Iterable[str]
                 ) -> Footers | None:
    """The merged schema of the Parquet files below ``paths`` and the groups to read them
    in (module docstring), or None where Spark must find it: a path not on the local disk,
    a file pyarrow cannot read as Parquet, a column of a type outside ``spark_type``'s
    table, or a data column named like a partition column. ``wanted``: the extension
    columns the scan reads (the format's fields are always read, and any other column is
    given for the caller to refuse). A missing path is a FileNotFoundError; a column whose
    types differ between files is a :class:`Mismatch`."""
    if not paths or not all(is_local(p) for p in paths):
        return None
    roots = [_local(p) for p in paths]
    files = list_local(roots)
    wanted, partitions = set(wanted), set(partitions)
    merged: dict[str, tuple[T.DataType | None, str]] = {}  # name: (type, first file)
    null_in: dict[str, frozenset[str]] = {}  # file: its null-typed columns
    for _, f in files:
        try:
            schema = pq.read_schema(f)
        except (OSError, pa.ArrowException):
            return None  # not Parquet: Spark's read says so as it always has
        nulls = set()
        for field in schema:
            name = field.name
            if name.startswith("x_") and name not in wanted:
                continue
            if name in partitions:
                return None
            if pa.types.is_null(field.type):
                nulls.add(name)
                merged.setdefault(name, (None, f))
                continue
            st = spark_type(field.type)
            if st is None:
                return None
            have, where = merged.get(name, (None, f))
            if have is not None and have != st:
                raise Mismatch(f"column '{name}' has type {st.simpleString()} in {f} "
                               f"but {have.simpleString()} in {where}")
            merged[name] = (st, f if have is None else where)
        null_in[f] = frozenset(nulls)
    fields = []
    for name, (st, _) in merged.items():
        if st is None:  # null in every file that has it
            if name.startswith("x_") or name not in FORMAT_TYPES:
                continue
            st = FORMAT_TYPES[name]
        fields.append(T.StructField(name, st))
    whole = T.StructType(fields)
    kinds = set(null_in.values())
    if kinds <= {frozenset()}:
        return Footers(whole, [Group(list(paths), None, whole)])
    by: dict[tuple[str, frozenset[str]], list[str]] = {}
    for root, f in files:
        by.setdefault((root, null_in[f]), []).append(f)
    groups = [Group(members, root if os.path.isdir(root) else None,
                    T.StructType([x for x in whole.fields if x.name not in nulls]))
              for (root, nulls), members in by.items()]
    return Footers(whole, groups)
