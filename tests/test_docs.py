"""The committed documents stay in step with the code."""

from pathlib import Path

from tomkit.checker.docs import render
from tomkit.checker.properties import properties

ROOT = Path(__file__).resolve().parents[1]


def test_properties_md_is_current():
    committed = (ROOT / "docs" / "properties.md").read_text()
    assert committed == render(), "run: python -m tomkit.checker.docs > docs/properties.md"


def test_every_property_cites_a_source_and_defines_its_witness():
    for p in properties().values():
        assert "Witness" in p.doc or "witness" in p.doc, p.name
        assert any(s in p.doc for s in ("Défago", "000", "001", "002", "003", "004",
                                        "Hadzilacos", "Birman")), p.name


def test_readme_names_the_two_commands_first():
    readme = (ROOT / "README.md").read_text()
    head = readme[: readme.index("##")]
    assert "make demo" in head and "make test" in head
