"""The committed documents stay in step with the code."""


from locations import ROOT

from tomkit.checker.docs import render
from tomkit.checker.properties import properties


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


def test_public_api_doctest():
    """The examples of tomkit/__init__.py run (simulate, write, check, conform, prove)."""
    import doctest

    import tomkit

    res = doctest.testmod(tomkit)
    assert res.attempted >= 10 and res.failed == 0


def test_result_objects_have_to_dict(tmp_path):
    import json

    import tomkit
    from tomkit.model.toto.rules import s_toto

    run = tomkit.simulate("toto", n=4, messages=20, seed=3, rule=s_toto)
    doc = run.to_dict()
    assert doc["options"]["rule"] == "s_toto" and doc["stats"]["sends"] == 20
    assert len(doc["records"]) == len(run.records)
    tomkit.write(tmp_path / "t.jsonl", run.records)
    assert json.dumps(tomkit.check(tmp_path / "t.jsonl").to_dict())
    o = tomkit.prove("s-toto-no-internal", n=6, delta=3, props=("agreement",)).to_dict()
    assert o["status"] == "counterexample" and o["counterexample"]["property"]
    json.dumps(o)
