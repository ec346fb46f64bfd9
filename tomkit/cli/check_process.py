"""Settings of the ``tomkit check`` process, made before the check path's modules load
(``tomkit/cli/__init__.py: main`` calls :func:`prepare` for ``check`` when it is the
command's own process, not a program calling ``main()``): where a check of
millions of events spends time outside its own work (docs/check-speed.md). Only the
``tomkit check`` process: a program that imports tomkit keeps its own settings."""

from __future__ import annotations

import ctypes
import os

from tomkit.checker.pandas_guard import refuse

__all__ = ["fresh_memory_settings", "no_pandas_probe", "prepare"]


def prepare() -> None:
    """Everything below, before numpy and the readers are imported."""
    fresh_memory_settings()
    no_pandas_probe()


def fresh_memory_settings() -> None:
    """Keep freed memory for reuse in this process. A check builds arrays of a few MB per
    chunk of events; on the virtual machines measured, the first touch of fresh pages
    cost as much system time as the check's own work (docs/check-speed.md). So: no
    transparent huge pages for numpy's arrays (numpy's own setting, read when numpy is
    imported; the environment's value wins), and glibc's malloc serves arrays up to 256 MB
    from memory it keeps (up to 1 GB, in one arena for all threads) rather than mapping
    and unmapping each.

    Arrow's buffers (the decoded columns, the chunks' Arrow work) come from the same
    malloc, unless ``ARROW_DEFAULT_MEMORY_POOL`` names a pool: pyarrow's own default,
    mimalloc, hands freed pages back to the system and takes fresh ones again, about a
    second of system time on the bench's 9.9 M events."""
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    try:
        mallopt = ctypes.CDLL(None).mallopt  # glibc; elsewhere there is nothing to set
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold, m_arena_max = -1, -3, -8  # malloc.h
    mallopt(m_mmap_threshold, 256 << 20)
    mallopt(m_trim_threshold, 1 << 30)
    if "MALLOC_ARENA_MAX" not in os.environ:
        # one arena: what a worker thread frees, the next chunk reuses whichever thread
        # builds it (an arena per thread kept its own freed memory: 660 MB peak, not 570)
        mallopt(m_arena_max, 1)
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        import pyarrow as pa

        pa.set_memory_pool(pa.system_memory_pool())


def no_pandas_probe() -> None:
    """pyarrow asks for pandas at every conversion of Python values, only to learn whether
    the input is a pandas object; the check never hands it one (the single pass, which
    hashes with pandas, takes it through :func:`tomkit.checker.pandas_guard.pandas`)."""
    refuse()
