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
        if isinstance(node, ast.ImportFrom) and (node.module or node.level):
            out.add(absolute(path, node))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def absolute(path: Path, node: ast.ImportFrom) -> str:
    """The module a ``from`` import names, a relative one (``from ..traces import x`` in
    ``model/sim.py``: ``tomkit.traces``) resolved against the module's package."""
    if not node.level:
        return node.module or ""
    mod = module_name(path).split(".")
    package = mod if path.name == "__init__.py" else mod[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


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


def test_the_layer_test_sees_a_relative_import(tmp_path):
    global ROOT
    (tmp_path / "model" / "net").mkdir(parents=True)
    bad = tmp_path / "model" / "net" / "x.py"
    bad.write_text("from ...checker.engine import check_paths\nfrom .. import sim\n"
                   "from . import links\n")
    saved, ROOT = ROOT, tmp_path
    try:
        assert imports(bad) == {"tomkit.checker.engine", "tomkit.model", "tomkit.model.net"}
    finally:
        ROOT = saved


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


#: the top-level folders and the tomkit packages they install as (pyproject's package-dir)
PACKAGES = {"traces": "tomkit.traces", "model": "tomkit.model", "checker": "tomkit.checker",
            "fuzz": "tomkit.fuzz", "tomkit": "tomkit"}


def module_name(path: Path) -> str:
    """``model/toto/dag.py`` -> ``tomkit.model.toto.dag``; a package's ``__init__.py`` ->
    the package."""
    rel = path.relative_to(ROOT)
    parts = [PACKAGES[rel.parts[0]], *rel.parts[1:]]
    parts[-1] = parts[-1].removesuffix(".py")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(files: list[Path]) -> dict[str, set[str]]:
    """module -> the tomkit modules it imports, wherever the import stands (at the top or
    inside a function): ``from pkg import name`` counts as importing ``pkg.name`` when that
    is a module."""
    names = {module_name(f): f for f in files}
    graph: dict[str, set[str]] = {}
    for mod, f in names.items():
        out = set()
        for node in runtime_nodes(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or node.level):
                base = absolute(f, node)
                out.add(base)
                out.update(f"{base}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
        graph[mod] = {m for m in out if m in names and m != mod}
    return graph


def runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (imports for type hints
    only, never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    import networkx as nx

    g = nx.DiGraph([(a, b) for a, bs in graph.items() for b in bs])
    return sorted(nx.simple_cycles(g), key=len)


def package_files() -> list[Path]:
    return sorted(p for top in PACKAGES for p in (ROOT / top).rglob("*.py"))


def test_no_import_loops():
    """No module imports, directly or through others, a module that imports it back, not
    even through an import placed inside a function (which only hides the loop): a piece
    two modules share has a home below both."""
    found = cycles(import_graph(package_files()))
    assert not found, "import loops: " + "; ".join(" -> ".join(c) for c in found[:5])


def test_the_loop_test_sees_one_inside_a_function(tmp_path):
    pkg = tmp_path / "model"
    pkg.mkdir()
    (pkg / "a.py").write_text("from tomkit.model.b import x\n")
    (pkg / "b.py").write_text("def f():\n    from tomkit.model.a import y\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        graph = import_graph(sorted(pkg.glob("*.py")))
    finally:
        ROOT = saved
    assert cycles(graph) == [["tomkit.model.a", "tomkit.model.b"]] or \
        cycles(graph) == [["tomkit.model.b", "tomkit.model.a"]]


def test_the_loop_test_sees_one_through_relative_imports(tmp_path):
    pkg = tmp_path / "model"
    pkg.mkdir()
    (pkg / "a.py").write_text("from .b import x\n")
    (pkg / "b.py").write_text("from . import a\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        graph = import_graph(sorted(pkg.glob("*.py")))
    finally:
        ROOT = saved
    assert sorted(map(sorted, cycles(graph))) == [["tomkit.model.a", "tomkit.model.b"]]


# ------------------------------------------------ private attributes across modules

#: private names of other code that have no public spelling, each with the reason
FOREIGN_PRIVATE = {
    "_replace": "namedtuple's own API (underscored so as not to clash with fields)",
    "_fields": "namedtuple's own API",
    "_asdict": "namedtuple's own API",
    "_make": "namedtuple's own API",
    "_SubParsersAction": "argparse: the type of add_subparsers()'s result, public only "
                         "under this name",
    "_ActionsContainer": "argparse: what a parser and an argument group share, public only "
                         "under this name",
    "_jvm": "PySpark: the JVM gateway has no public handle",
    "_jsc": "PySpark: the Java SparkContext has no public handle",
    "_ensure_initialized": "PySpark: starting the gateway before a session, no public call",
    "_gateway": "PySpark: the gateway, whose ``proc`` is the JVM it started, has no public "
                "handle (waiting for that JVM to exit: a class archive, checker/spark/session.py)",
    "_get_local_constants": "Hypothesis: its pool of the imported modules' literals has no "
                            "public switch, and a seeded search must not read it "
                            "(fuzz/seeding.py)",
}


def own_private_names(tree: ast.AST) -> set[str]:
    """The private names (``_x``) a module defines for its own objects: its functions
    and methods, class attributes and dataclass fields, ``__slots__``, and attributes
    set on ``self`` or ``cls``."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                targets = (item.targets if isinstance(item, ast.Assign) else
                           [item.target] if isinstance(item, ast.AnnAssign) else [])
                for t in targets:
                    if isinstance(t, ast.Name):
                        out.add(t.id)
                        if t.id == "__slots__" and item.value is not None:
                            out.update(c.value for c in ast.walk(item.value)
                                       if isinstance(c, ast.Constant)
                                       and isinstance(c.value, str))
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            out.add(node.attr)
    return {n for n in out if n.startswith("_") and not n.startswith("__")}


def private_attributes(path: Path) -> list[str]:
    """``line: expression`` of every ``obj._name`` in ``path`` reaching another module's
    private name: an attribute with one leading underscore, on anything but ``self``,
    ``cls`` or ``super()``, that the module does not define for its own objects and that
    is not one of :data:`FOREIGN_PRIVATE`."""
    tree = ast.parse(path.read_text())
    own = own_private_names(tree)
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            continue
        v = node.value
        if isinstance(v, ast.Name) and v.id in ("self", "cls"):
            continue
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
            continue  # a subclass's own hook of its base class
        if node.attr in own or node.attr in FOREIGN_PRIVATE:
            continue
        out.append(f"{node.lineno}: {ast.unparse(node)}")
    return out


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_no_private_attribute_of_another_module(folder):
    """A capability, a hook or a piece of state another module needs is declared on the
    interface and reached by its public name (no ``sim.procs[i]._reset``)."""
    for f in sorted((ROOT / folder).rglob("*.py")):
        found = private_attributes(f)
        assert not found, f"{f.relative_to(ROOT)} reaches private attributes: {found}"


def test_the_private_attribute_test_sees_one(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text(
        "class Sim:\n"
        "    __slots__ = ('_heap',)\n"
        "    _limit = 3\n"
        "    def __init__(self, procs):\n"
        "        self._heap, self._procs = [], procs\n"
        "    def _step(self):\n"
        "        other = Sim([])\n"
        "        other._heap, other._step, other._limit, other._procs  # its own: fine\n"
        "        self.procs[0]._reset(None)\n"
        "        self._procs[0]._reset(None)\n"
        "        point._replace(x=1)\n"
        "        super()._step()\n"
        "        Sim._step(self)\n"
        "        return spark.sparkContext._jvm, argparse._SubParsersAction, net._clock\n")
    assert private_attributes(bad) == ["9: self.procs[0]._reset", "10: self._procs[0]._reset",
                                       "14: net._clock"]


def test_the_model_map_names_every_module():
    """model/__init__.py is the map of the models: it names every module of model/."""
    import tomkit.model

    doc = tomkit.model.__doc__ or ""
    for f in sorted((ROOT / "model").rglob("*.py")):
        if f.name == "__init__.py":
            continue
        rel = f.relative_to(ROOT / "model")
        short = rel.stem if len(rel.parts) == 1 else rel.as_posix()
        assert f"``{short}``" in doc or f"``{rel.as_posix()}``" in doc, \
            f"model/__init__.py does not name {rel.as_posix()}"


def test_every_package_folder_installs(monkeypatch):
    """setup.py finds every folder with an __init__.py as a package to install, named as
    pyproject.toml's package-dir maps it."""
    import runpy

    import setuptools

    seen = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: seen.update(kw))
    runpy.run_path(str(ROOT / "setup.py"))
    listed = set(seen["packages"])
    inits = [f for f in package_files() if f.name == "__init__.py"]
    assert len(inits) > 20
    for f in inits:
        assert module_name(f) in listed, f"{f.parent.relative_to(ROOT)} is not installed"
    assert {"tomkit", "tomkit.model.toto", "tomkit.fuzz.prove.delivery"} <= listed
