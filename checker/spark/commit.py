"""Replacing a scan's output ``OUT`` so that a reader, or a killed run, never loses it.

A scan writes everything into a staging directory beside ``OUT``,
``OUT.tmp-<time>-<pid>-<host>-<random>``, and marks it complete with an empty
``_SUCCESS`` written last. Then it installs it, in one of two ways:

* where a directory is renamed in one step (local disks, HDFS): ``OUT`` is renamed to
  ``OUT.old-<same id>``, the staging directory to ``OUT``, and the old one is deleted;
* on object stores (S3, GCS, Azure blobs), where a "rename" copies object by object:
  ``OUT/_SUCCESS`` is deleted first, then the other objects under ``OUT``; the staging
  objects are copied in (server-side copies) and ``OUT/_SUCCESS`` is written last; then
  the staging directory is deleted. A reader of an object store takes ``OUT`` as complete
  only when ``OUT/_SUCCESS`` exists.

At every instant ``OUT`` holds the old complete result or the new one, or the run was
killed inside the install, and :func:`recover` puts a complete one back: every scan calls
it on ``OUT`` before anything else, and ``python -m tomkit.checker.spark.commit OUT`` does
the same by hand. It installs the newest complete staging directory when ``OUT`` is
missing (local, HDFS) or not marked (object stores), else renames ``OUT.old-*`` back, and
deletes every other staging and old directory of ``OUT``, except those of a scan still
running on this machine (the process named in the staging directory's name is alive).
Two scans writing the same ``OUT`` from two machines at once are not supported.

Two implementations of the few file operations this needs: :class:`ArrowTree` over
``pyarrow.fs`` (the files engine, whose tasks write through pyarrow) and
:class:`HadoopTree` over Spark's Hadoop file systems (the arrow and sql engines, whose
tables Spark writes). ``HOOK``, when set, is called at each step of :func:`install` (tests
kill the process there).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import socket
import sys
import time
import uuid
from collections.abc import Callable

import pyarrow.fs as pafs

__all__ = ["HOOK", "MARKER", "ArrowTree", "HadoopTree", "Tree", "commit", "install", "is_live",
           "recover", "staging_name"]

MARKER = "_SUCCESS"
#: called with the name of each step of the install (fault injection in tests)
HOOK: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if HOOK is not None:
        HOOK(name)


class Tree:
    """The file operations of a commit, on paths of one store."""

    atomic: bool  # a directory rename is one step

    def exists(self, path: str) -> bool: ...
    def children(self, parent: str) -> list[str]: ...  # names; [] when missing
    def files(self, path: str) -> list[str]: ...  # relative paths of files below
    def rename(self, src: str, dst: str) -> None: ...
    def copy(self, src: str, dst: str) -> None: ...
    def delete(self, path: str) -> None: ...  # a file or a tree; no error when missing
    def write(self, path: str, data: bytes) -> None: ...

    def split(self, path: str) -> tuple[str, str]:
        return posixpath.split(path.rstrip("/"))


class ArrowTree(Tree):
    def __init__(self, fs: pafs.FileSystem, atomic: bool):
        self.fs, self.atomic = fs, atomic

    def exists(self, path: str) -> bool:
        return self.fs.get_file_info(path).type != pafs.FileType.NotFound

    def children(self, parent: str) -> list[str]:
        sel = pafs.FileSelector(parent, allow_not_found=True)
        return [posixpath.basename(i.path.rstrip("/")) for i in self.fs.get_file_info(sel)]

    def files(self, path: str) -> list[str]:
        sel = pafs.FileSelector(path, recursive=True, allow_not_found=True)
        root = path.rstrip("/") + "/"
        return sorted(i.path[len(root):] for i in self.fs.get_file_info(sel)
                      if i.type == pafs.FileType.File)

    def rename(self, src: str, dst: str) -> None:
        self.fs.move(src, dst)

    def copy(self, src: str, dst: str) -> None:
        self.fs.copy_file(src, dst)

    def delete(self, path: str) -> None:
        t = self.fs.get_file_info(path).type
        if t == pafs.FileType.Directory:
            self.fs.delete_dir(path)
        elif t != pafs.FileType.NotFound:
            self.fs.delete_file(path)

    def write(self, path: str, data: bytes) -> None:
        self.fs.create_dir(posixpath.dirname(path), recursive=True)
        with self.fs.open_output_stream(path) as f:
            f.write(data)


class HadoopTree(Tree):
    """Spark's Hadoop file systems, by path or URI as Spark reads them."""

    def __init__(self, spark, path: str):
        jvm = spark.sparkContext._jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()
        self._jvm = jvm
        p = jvm.org.apache.hadoop.fs.Path(path)
        self._fs = p.getFileSystem(self._conf)
        scheme = self._fs.makeQualified(p).toUri().getScheme()
        self.atomic = scheme in ("file", "hdfs", "viewfs")
        self.local = scheme == "file"

    def _p(self, path: str):
        return self._jvm.org.apache.hadoop.fs.Path(path)

    def exists(self, path: str) -> bool:
        return bool(self._fs.exists(self._p(path)))

    def children(self, parent: str) -> list[str]:
        if not self.exists(parent):
            return []
        return [st.getPath().getName() for st in self._fs.listStatus(self._p(parent))]

    def files(self, path: str) -> list[str]:
        if not self.exists(path):
            return []
        root = self._fs.makeQualified(self._p(path)).toString().rstrip("/") + "/"
        out, it = [], self._fs.listFiles(self._p(path), True)
        while it.hasNext():
            out.append(it.next().getPath().toString()[len(root):])
        return sorted(out)

    def rename(self, src: str, dst: str) -> None:
        # Hadoop moves src *into* an existing directory dst: the callers make sure dst is gone
        if not self._fs.rename(self._p(src), self._p(dst)):
            raise OSError(f"could not rename {src} to {dst}")

    def copy(self, src: str, dst: str) -> None:
        util = self._jvm.org.apache.hadoop.fs.FileUtil
        if not util.copy(self._fs, self._p(src), self._fs, self._p(dst), False, self._conf):
            raise OSError(f"could not copy {src} to {dst}")

    def delete(self, path: str) -> None:
        self._fs.delete(self._p(path), True)

    def write(self, path: str, data: bytes) -> None:
        stream = self._fs.create(self._p(path), True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()


# ---- names ---------------------------------------------------------------------------------


def _host() -> str:
    return hashlib.blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()


def staging_name(out: str) -> str:
    """``OUT.tmp-<time>-<pid>-<host>-<random>``: sortable by time, and naming the process
    that writes it."""
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
    return f"{out.rstrip('/')}.tmp-{stamp}-{os.getpid()}-{_host()}-{uuid.uuid4().hex[:8]}"


def is_live(name: str) -> bool:
    """Is the scan that writes staging directory ``name`` still running (on this machine,
    in another process)?"""
    try:
        _, pid, host, _ = name.rsplit(".tmp-", 1)[1].split("-")
        pid_n = int(pid)
    except ValueError:
        return False
    if host != _host() or pid_n == os.getpid():
        return False
    try:
        os.kill(pid_n, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _id(staging: str) -> str:
    return staging.rsplit(".tmp-", 1)[1]


# ---- the protocol --------------------------------------------------------------------------


def commit(tree: Tree, out: str, staging: str) -> None:
    """Mark the complete ``staging`` directory and install it as ``out`` (module
    docstring)."""
    tree.write(f"{staging}/{MARKER}", b"")
    _step("marked")
    install(tree, staging, out)


def install(tree: Tree, staging: str, out: str) -> None:
    out = out.rstrip("/")
    if tree.atomic:
        old = f"{out}.old-{_id(staging)}"
        if tree.exists(out):
            tree.rename(out, old)
            _step("aside")
        tree.rename(staging, out)
        _step("installed")
        tree.delete(old)
        return
    tree.delete(f"{out}/{MARKER}")
    _step("unmarked")
    for f in tree.files(out):
        tree.delete(f"{out}/{f}")
        _step("deleted")
    for f in tree.files(staging):
        if f != MARKER:
            tree.copy(f"{staging}/{f}", f"{out}/{f}")
            _step("copied")
    tree.write(f"{out}/{MARKER}", b"")
    _step("installed")
    tree.delete(staging)


def complete(tree: Tree, out: str) -> bool:
    return tree.exists(f"{out}/{MARKER}") or (tree.atomic and tree.exists(out))


def recover(tree: Tree, out: str) -> list[str]:
    """Put a complete result back under ``out`` if a killed run left none, and delete the
    staging and old directories of runs that are gone; what it did, one line each."""
    out = out.rstrip("/")
    parent, base = tree.split(out)
    if not base:
        raise ValueError(f"{out}: the output must be a directory below a bucket or root")
    # a bare name ("out") has no parent in the path: the working directory, which
    # Hadoop's Path refuses to be given as ""
    names = tree.children(parent or ".")
    join = (lambda n: f"{parent}/{n}") if parent else (lambda n: n)
    temps = sorted(join(n) for n in names if n.startswith(f"{base}.tmp-"))
    olds = sorted(join(n) for n in names if n.startswith(f"{base}.old-"))
    temps = [t for t in temps if not is_live(t)]
    done: list[str] = []
    if not complete(tree, out):
        ready = [t for t in temps if tree.exists(f"{t}/{MARKER}")]
        if ready:
            install(tree, ready[-1], out)
            done.append(f"installed the complete result of a killed run, {ready[-1]}")
            temps.remove(ready[-1])
        elif olds and tree.atomic:
            tree.rename(olds[-1], out)
            done.append(f"restored the previous result from {olds[-1]}")
            olds.pop()
    for d in temps + olds:
        tree.delete(d)
        done.append(f"deleted {d}")
    return done


def main(argv: list[str] | None = None) -> int:
    """``python -m tomkit.checker.spark.commit OUT``: recover ``OUT`` by hand."""
    import argparse

    from tomkit.checker.spark.storage import store_of

    ap = argparse.ArgumentParser(prog="python -m tomkit.checker.spark.commit",
                                 description="Put back a complete scan output that a killed "
                                 "scan left incomplete, and delete its temporary directories.")
    ap.add_argument("out", metavar="OUT")
    args = ap.parse_args(argv)
    uri = args.out if "://" in args.out else os.path.abspath(args.out)
    st = store_of(uri)
    for line in recover(ArrowTree(st.fs, st.renames_atomically), st.path(uri)) or ["nothing to do"]:
        print(f"{args.out}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
