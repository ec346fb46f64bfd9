"""The layering of the project, for every folder: traces/ is the bottom layer and imports
no other part; model/ and checker/ import only traces/ (and the package root's version);
fuzz/ (proving and fuzzing) builds on model/ and checker/; the command line, the demo and
the public API (tomkit/) sit on top and may import anything."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: folder -> the tomkit packages its modules may import ("tomkit" alone: the package root,
#: for __version__)
ALLOWED = {
    "traces": {"tomkit.traces"},
    "model": {"tomkit.traces", "tomkit.model"},
    "checker": {"tomkit", "tomkit.traces", "tomkit.checker"},
    "fuzz": {"tomkit", "tomkit.traces", "tomkit.model", "tomkit.checker", "tomkit.fuzz"},
}


def imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def layer(module: str) -> str:
    """``tomkit.model.sim`` -> ``tomkit.model``; ``tomkit`` -> ``tomkit``."""
    return ".".join(module.split(".")[:2])


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_layer_imports(folder):
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files
    for f in files:
        ours = {m for m in imports(f) if m == "tomkit" or m.startswith("tomkit.")}
        bad = {m for m in ours if layer(m) not in ALLOWED[folder]}
        assert not bad, f"{f.relative_to(ROOT)} imports {sorted(bad)}"


def test_every_package_folder_is_constrained():
    """A new top-level folder of code must be placed in the layering."""
    folders = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert folders - {"tomkit"} == set(ALLOWED)


def test_the_layer_test_sees_a_violation(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text("from tomkit.checker.engine import check_paths\n")
    assert {layer(m) for m in imports(bad)} - ALLOWED["model"] == {"tomkit.checker"}


def private_imports(path: Path) -> set[str]:
    """``module.name`` of every private name (``_x``) imported from a tomkit module."""
    return {f"{node.module}.{a.name}" for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tomkit")
            for a in node.names if a.name.startswith("_") and not a.name.startswith("__")}


@pytest.mark.parametrize("folder", ["checker", "model", "fuzz", "tomkit"])
def test_no_private_names_cross_modules(folder):
    """A name another module needs has a public home."""
    for f in sorted((ROOT / folder).rglob("*.py")):
        assert not private_imports(f), f"{f.relative_to(ROOT)} imports {private_imports(f)}"


def test_the_private_import_test_sees_one(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text("from tomkit.checker.chunk import Piece, _ranges\n")
    assert private_imports(bad) == {"tomkit.checker.chunk._ranges"}
