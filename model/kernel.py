"""The simulator's compiled kernel: which modules may run compiled, and when they do.

Issue 30 part 6 asks for the simulator at 100 k ToTo deliveries per CPU-second; the pure
Python modules give about 60 k with a flat profile (docs/sim-speed.md), the causal DAG
view (``toto/dag.py``) taking about half of it, the ToTo process and the recorder most of
the rest. The modules of :data:`MODULES` are therefore also compiled, from the very same
source, by mypyc (mypy's compiler of typed Python to C extension modules, installed from
wheels with mypy) when tomkit is installed on a machine with a C compiler (``setup.py``).
mypyc reads the module's type hints: attributes of a class become fields of a C struct,
ints and lists typed as such are accessed without Python's generic protocol; the module
must type-check (mypy) and keeps Python's semantics (arbitrary-precision ints, the same
exceptions). Cython, which compiles the same untyped modules but still goes through
Python's protocol for every untyped value, saved almost nothing; numba compiles array
code, and the view keeps dicts and lists of message ids (docs/sim-speed.md has the
measurements). Where the Python code lets a value be an int or a float as the caller gave
it (a time written to a record), the hint says so (``float | int``): mypyc turns an int
given for a ``float`` into a float.

A compiled module is only used while it is the compiled form of the Python file beside
it: the build writes, beside each extension module, the SHA-256 of the source it
compiled, and :class:`KernelFinder` (installed by ``model/__init__.py``, before any of
these modules is imported) loads the Python file instead when the file has changed
since (an edit, a merge, a checkout), when no extension was built (no compiler), or when
the environment sets ``TOMKIT_PURE_PYTHON=1``; and all of them do, as soon as one does
(:class:`KernelFinder`). The traces are the same either way
(tests/model/test_sim_kernel.py runs both and compares them). After an edit of one of
these files, ``make kernel`` compiles it again.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

try:  # read by mypyc as it compiles the kernel's modules (a class's compiled form)
    from mypy_extensions import mypyc_attr
except ImportError:  # Python alone needs nothing of it
    def mypyc_attr(*_: object, **__: object) -> Callable[[type], type]:  # type: ignore[misc]
        return lambda cls: cls

__all__ = ["ENV", "MODULES", "KernelFinder", "compiled_modules", "install", "mypyc_attr",
           "origin"]

#: the modules compiled, as paths under model/ without ``.py`` (setup.py reads this list);
#: compiled as one group, they call one another's functions natively
MODULES = ("toto/dag", "toto/process", "recorder")
#: set to 1 (or any non-empty value but 0) to run the Python files
ENV = "TOMKIT_PURE_PYTHON"
#: the extension beside a compiled module's file holding the SHA-256 of its source
HASH_SUFFIX = ".source-sha256"

_HERE = Path(__file__).resolve().parent
_PACKAGE = __name__.rpartition(".")[0]


def _names() -> dict[str, Path]:
    return {f"{_PACKAGE}.{m.replace('/', '.')}": _HERE / f"{m}.py" for m in MODULES}


def _pure() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


def origin(source: Path) -> Path:
    """The file to load for the kernel module whose Python file is ``source``: its
    extension module when one was built from this very source, else ``source``."""
    if _pure():
        return source
    try:
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
    except OSError:
        return source
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        ext = source.with_name(source.stem + suffix)
        stamp = ext.with_name(ext.name + HASH_SUFFIX)
        try:
            if stamp.read_text().strip() == digest and ext.is_file():
                return ext
        except OSError:
            continue
    return source


class KernelFinder:
    """Finds the kernel modules (``sources``: by module name, the Python file; default
    :data:`MODULES`) and nothing else, each at :func:`origin` while all of them are
    compiled from their current sources, else every one as its Python file; every other
    import goes on to the next finder.

    All or none: the modules are compiled as one group, in which a compiled module makes
    the other modules' classes natively (a compiled ``TotoProcess`` builds the compiled
    ``DagView``, whatever ``toto/dag`` is), so an edited module running as Python beside
    the others compiled would mix the edited code with the stale."""

    def __init__(self, sources: dict[str, Path] | None = None) -> None:
        self.sources = _names() if sources is None else sources

    def compiled(self) -> bool:
        """Whether every module's extension was built from its current source."""
        return all(origin(s) != s for s in self.sources.values())

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(fullname)
        if source is None:
            return None
        where = origin(source) if self.compiled() else source
        if where == source:
            loader: importlib.abc.Loader = importlib.machinery.SourceFileLoader(
                fullname, str(source))
        else:
            loader = importlib.machinery.ExtensionFileLoader(fullname, str(where))
        return importlib.util.spec_from_file_location(fullname, where, loader=loader)


def install() -> None:
    """Put :class:`KernelFinder` first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, KernelFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, KernelFinder())


def compiled_modules() -> dict[str, bool]:
    """Per kernel module already imported, whether it runs compiled."""
    return {name: not str(getattr(sys.modules[name], "__file__", "")).endswith(".py")
            for name in _names() if name in sys.modules}
