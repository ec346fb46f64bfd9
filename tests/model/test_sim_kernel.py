"""The simulator's compiled kernel (model/kernel.py): the compiled modules (the DAG view, the
ToTo process, the recorder) give the very traces the Python files give, and the compiled
modules run only while every one's source is the one it was compiled from."""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tomkit.model import kernel

#: a few runs, digested in a fresh process with the kernel compiled or not
SCRIPT = r"""
import hashlib, json
from tomkit.model.kernel import compiled_modules
from tomkit.model.sim import SimConfig, simulate
runs = [dict(protocol="toto", n=8, options={"delta": 4}, messages=1500, seed=3),
        dict(protocol="gl-toto", n=6, messages=1000, seed=9, crashes=((0, 2.0),)),
        dict(protocol="toto-dynamic", n=6, messages=800, seed=8, crashes=((1, 2.0),),
             joins=((5, 1.0),), partitions=((4.0, ((0, 2),)),), heals=(5.0,)),
        dict(protocol="s-toto", n=5, messages=800, seed=4, options={"ack_candidates": True})]
out = []
for kw in runs:
    res = simulate(SimConfig(**kw))
    text = "\n".join(json.dumps(r, sort_keys=True) for r in res.records)
    out.append([hashlib.sha256(text.encode()).hexdigest(), len(res.records)])
print(json.dumps({"compiled": compiled_modules(), "digests": out}))
"""


def run(pure: bool) -> dict:
    env = {**os.environ, kernel.ENV: "1" if pure else "0"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, check=True, timeout=900)
    return json.loads(done.stdout.strip().splitlines()[-1])


def built() -> bool:
    return kernel.KernelFinder().compiled()


def test_compiled_and_python_kernels_write_the_same_traces() -> None:
    pure = run(pure=True)
    assert not any(pure["compiled"].values())
    if not built():
        pytest.skip("no compiled kernel built here (no C compiler or mypyc): nothing to compare")
    fast = run(pure=False)
    assert fast["compiled"] == {f"tomkit.model.{m.replace('/', '.')}": True
                                for m in kernel.MODULES}
    assert fast["digests"] == pure["digests"]
    assert all(n > 1000 for _, n in pure["digests"])


def fake_module(folder: Path, stamped: bytes | None) -> Path:
    """A module's source, an 'extension' beside it and its stamp of ``stamped``."""
    source = folder / "mod.py"
    source.write_text("X = 1\n")
    ext = folder / ("mod" + importlib.machinery.EXTENSION_SUFFIXES[0])
    ext.write_bytes(b"\0")
    if stamped is not None:
        ext.with_name(ext.name + kernel.HASH_SUFFIX).write_text(
            hashlib.sha256(stamped).hexdigest() + "\n")
    return source


def test_an_extension_runs_only_while_its_source_is_unchanged(tmp_path: Path,
                                                             monkeypatch) -> None:
    monkeypatch.delenv(kernel.ENV, raising=False)
    source = fake_module(tmp_path, b"X = 1\n")
    assert kernel.origin(source).suffix == ".so"
    source.write_text("X = 2\n")  # edited (or merged) since it was compiled
    assert kernel.origin(source) == source


def test_no_stamp_or_no_extension_runs_the_python_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(kernel.ENV, raising=False)
    source = fake_module(tmp_path, None)
    assert kernel.origin(source) == source
    (tmp_path / "other").mkdir()
    lone = tmp_path / "other" / "mod.py"
    lone.write_text("X = 1\n")
    assert kernel.origin(lone) == lone


def test_the_environment_asks_for_the_python_file(tmp_path: Path, monkeypatch) -> None:
    source = fake_module(tmp_path, b"X = 1\n")
    monkeypatch.setenv(kernel.ENV, "1")
    assert kernel.origin(source) == source
    monkeypatch.setenv(kernel.ENV, "0")
    assert kernel.origin(source) != source


def test_one_stale_module_makes_every_module_run_as_python(tmp_path: Path,
                                                          monkeypatch) -> None:
    """The group is compiled as one (a compiled module builds the others' classes
    natively), so one edited source sends every module of the group to its Python file."""
    monkeypatch.delenv(kernel.ENV, raising=False)
    sources = {}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        sources[f"pkg.{name}"] = fake_module(tmp_path / name, b"X = 1\n")
    finder = kernel.KernelFinder(sources)
    assert finder.compiled()
    assert finder.find_spec("pkg.a").origin.endswith(".so")
    assert finder.find_spec("elsewhere") is None
    sources["pkg.b"].write_text("X = 2\n")
    assert not finder.compiled()
    assert finder.find_spec("pkg.a").origin == str(sources["pkg.a"])
    assert finder.find_spec("pkg.b").origin == str(sources["pkg.b"])
