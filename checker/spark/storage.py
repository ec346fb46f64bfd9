"""Where a scan's files live: a path or URI, opened with ``pyarrow.fs``.

The files engine lists, reads and writes through pyarrow's file systems, on the driver and
in every task, so it needs no Hadoop connector on the cluster's classpath:

* a path without a scheme is qualified by Spark's default file system (``fs.defaultFS``:
  the local disk, or HDFS on most YARN clusters), as Spark's own readers do;
* ``file:`` and local paths: ``LocalFileSystem``;
* ``s3://``, ``s3a://``, ``s3n://``: ``S3FileSystem``;
* ``hdfs://``, ``viewfs://``: ``HadoopFileSystem`` (libhdfs and the Hadoop classpath on
  every node: ``ARROW_LIBHDFS_DIR``, ``CLASSPATH=$(hadoop classpath --glob)``);
* ``gs://``, ``abfs://``, ``abfss://`` and the other schemes pyarrow knows:
  ``FileSystem.from_uri``; any other scheme through fsspec, when it is installed.

Settings and credentials come from the usual places, never from tomkit's flags: the
environment and the SDKs' own chains (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``AWS_ENDPOINT_URL``, ``AWS_REGION``, ``~/.aws``, instance
roles; ``GOOGLE_APPLICATION_CREDENTIALS``; ``AZURE_STORAGE_*``), and for S3 also the
Hadoop settings Spark's s3a connector reads (``spark.hadoop.fs.s3a.endpoint``,
``.access.key``, ``.secret.key``, ``.session.token``, ``.endpoint.region``,
``.connection.ssl.enabled``, and their per-bucket forms ``fs.s3a.bucket.B.*``), which the
driver takes from Spark's Hadoop configuration (:func:`hadoop_settings`) and hands to the
tasks with the file list.
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import pyarrow.fs as pafs

__all__ = ["S3_KEYS", "Store", "StoreError", "hadoop_settings", "qualify", "store_of"]

#: the s3a settings that have a pyarrow counterpart
S3_KEYS = ("endpoint", "access.key", "secret.key", "session.token", "endpoint.region",
           "connection.ssl.enabled")
_S3 = ("s3", "s3a", "s3n")


class StoreError(ValueError):
    """A path whose store cannot be opened (unknown scheme, no connector)."""


def qualify(spark, path: str) -> str:
    """``path`` with the scheme Spark gives it: a local path stays a (absolute) local path;
    a path without a scheme on a cluster whose default file system is HDFS becomes
    ``hdfs://namenode/...``; URIs stay as written."""
    if "://" in path:
        return path
    if path.startswith("file:"):
        return os.path.abspath(urllib.parse.urlsplit(path).path)
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    p = jvm.org.apache.hadoop.fs.Path(path)
    uri = p.getFileSystem(conf).makeQualified(p).toUri()
    if uri.getScheme() in (None, "file"):
        return os.path.abspath(path)
    return uri.toString()


def hadoop_settings(spark, uris: list[str]) -> dict[str, str]:
    """The ``fs.s3a.*`` settings of Spark's Hadoop configuration that :func:`store_of`
    uses for the S3 buckets of ``uris`` (per-bucket settings first)."""
    if not any(urllib.parse.urlsplit(u).scheme in _S3 for u in uris):
        return {}
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    out = {}
    for key in S3_KEYS:
        v = conf.get(f"fs.s3a.{key}")
        if v:
            out[f"fs.s3a.{key}"] = v
    for u in uris:
        parts = urllib.parse.urlsplit(u)
        if parts.scheme in _S3:
            for key in S3_KEYS:
                v = conf.get(f"fs.s3a.bucket.{parts.netloc}.{key}")
                if v:
                    out[f"fs.s3a.bucket.{parts.netloc}.{key}"] = v
    return out


@dataclass
class Store:
    """One file system, by scheme and authority (bucket, name node): picklable, and
    opened once per process (the driver's and each Python worker's)."""

    scheme: str  # "file" for local paths
    authority: str
    settings: dict[str, str] = field(default_factory=dict)
    _fs: Any = field(default=None, repr=False, compare=False)

    @property
    def local(self) -> bool:
        return self.scheme == "file"

    @property
    def renames_atomically(self) -> bool:
        """Is a directory renamed in one step (local disks, HDFS), or copied object by
        object (object stores)?"""
        return self.scheme in ("file", "hdfs", "viewfs")

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_fs": None}

    @property
    def fs(self) -> pafs.FileSystem:
        if self._fs is None:
            self._fs = _open(self)
        return self._fs

    def path(self, uri: str) -> str:
        """The path pyarrow's file system names ``uri`` by."""
        if self.local:
            return uri
        if isinstance(self.fs, pafs.PyFileSystem):  # fsspec's own notion of a path
            import fsspec.core

            return fsspec.core.url_to_fs(uri)[1]
        parts = urllib.parse.urlsplit(uri)
        if self.scheme in ("file", "hdfs", "viewfs"):
            return parts.path.rstrip("/") or "/"
        return f"{parts.netloc}{parts.path}".rstrip("/")  # object stores: bucket/key


def store_of(uri: str, settings: dict[str, str] | None = None) -> Store:
    """The store of a qualified path (:func:`qualify`)."""
    if "://" not in uri:
        return Store("file", "")
    parts = urllib.parse.urlsplit(uri)
    return Store(parts.scheme, parts.netloc, dict(settings or {}))


def _s3_option(st: Store, key: str) -> str | None:
    return st.settings.get(f"fs.s3a.bucket.{st.authority}.{key}",
                           st.settings.get(f"fs.s3a.{key}"))


def _open(st: Store) -> pafs.FileSystem:
    if st.local:
        return pafs.LocalFileSystem()
    if st.scheme in _S3:
        kw: dict[str, Any] = {}
        # the AWS SDKs' variables, which pyarrow's constructor does not read itself
        endpoint = (_s3_option(st, "endpoint") or os.environ.get("AWS_ENDPOINT_URL_S3")
                    or os.environ.get("AWS_ENDPOINT_URL"))
        if endpoint:
            ssl = (_s3_option(st, "connection.ssl.enabled") or "true").lower() == "true"
            if "://" in endpoint:
                scheme, _, endpoint = endpoint.partition("://")
                kw["scheme"] = scheme
            else:
                kw["scheme"] = "https" if ssl else "http"
            kw["endpoint_override"] = endpoint
        for key, arg in (("access.key", "access_key"), ("secret.key", "secret_key"),
                         ("session.token", "session_token"), ("endpoint.region", "region")):
            v = _s3_option(st, key)
            if v:
                kw[arg] = v
        if ("region" not in kw and not endpoint and not os.environ.get("AWS_REGION")
                and not os.environ.get("AWS_DEFAULT_REGION")):
            kw["region"] = pafs.resolve_s3_region(st.authority)  # AWS itself: ask
        return pafs.S3FileSystem(**kw)
    if st.scheme in ("hdfs", "viewfs") and not st.authority:  # hdfs:///path
        return pafs.HadoopFileSystem("default")
    uri = f"{st.scheme}://{st.authority}/"
    try:
        return pafs.FileSystem.from_uri(uri)[0]
    except ValueError:  # ArrowInvalid: a scheme pyarrow does not know
        pass
    try:
        import fsspec
    except ImportError:
        raise StoreError(f"{uri}: pyarrow has no file system for scheme {st.scheme!r}, "
                         "and fsspec is not installed") from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fsspec.filesystem(st.scheme)))
