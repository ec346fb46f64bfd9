"""The layering DEVELOPERS.md sets: traces/ imports no other part; checker/ reads traces only."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "traces": ("tomkit.checker", "tomkit.model", "tomkit.fuzz", "tomkit.cli"),
    "checker": ("tomkit.model", "tomkit.fuzz", "tomkit.cli"),
}


def imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_layer_imports(folder):
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files
    for f in files:
        bad = {m for m in imports(f) if m.startswith(FORBIDDEN[folder])}
        assert not bad, f"{f.relative_to(ROOT)} imports {sorted(bad)}"
