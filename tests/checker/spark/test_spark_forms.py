"""The Spark engines' properties are the registry's: every property the scan decides
(``Property.scan``) has a DataFrame form in the SQL engine or is declared as handed to the
exact check, and the forms name no property the registry does not have; the engines'
unknown reasons are the registry's ``Property.reason``, asked of a trace's facts."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tracedsl import chunk_of, parse

pytest.importorskip("pyspark")

import tomkit.checker.spark.properties as SP  # noqa: E402
from tomkit.checker.properties import Options, properties, view_sequence  # noqa: E402
from tomkit.checker.spark.options import scanned_options  # noqa: E402
from tomkit.checker.spark.properties import BY_EXACT_CHECK, NAMES, SQL_FORMS  # noqa: E402


def test_the_scan_decides_the_registrys_scanned_properties_in_report_order():
    assert NAMES == [n for n, p in properties().items() if p.scan]
    # every default property is decided by a scan
    assert {n for n, p in properties().items() if p.default} <= set(NAMES)


def test_every_scanned_property_has_a_form_or_is_declared_exact():
    for n in NAMES:
        assert (n in SQL_FORMS) != (n in BY_EXACT_CHECK), n
    assert set(SQL_FORMS) | BY_EXACT_CHECK <= set(NAMES)


def test_the_scan_takes_the_options_its_properties_read():
    assert scanned_options() == ["latency_bound", "liveness_reading", "realtime_bound",
                                 "slot", "rate_max", "rate_avg", "rate_window"]


# --- the unknown reasons are the registry's (Property.reason), not a second table ---

_TRACES = {  # one trace of each shape the reasons tell apart
    "sends": "p send a\nq deliver a\np deliver a",
    "sends-deps": "p send a\np send b deps=a\nq deliver a\nq deliver b",
    "no-sends": "p deliver a\nq deliver a",
    "views": "p view v1 members=p,q\nq view v1 members=p,q\np send a\nq deliver a",
}
_OPTIONS = [Options(), Options(latency_bound=5.0), Options(realtime_bound=2.0),
            Options(rate_max=3, slot=1.0)]


@pytest.mark.parametrize("options", _OPTIONS, ids=repr)
def test_unknown_reason_is_the_registry_reason_on_real_chunks(options):
    props = properties()
    for label, text in _TRACES.items():
        chunk = chunk_of(parse(text, trace=label))
        facts = {k: bool(chunk.trace_has[k][0]) for k in SP.FACTS}
        for n in NAMES:
            p = props[n]
            want = p.reason(chunk, 0, options) if p.reason else "not decidable"
            assert SP.unknown_reason(n, facts, options) == want, (label, n)


def test_view_sequence_and_the_bounds_say_their_own_words():
    assert SP.unknown_reason("view-sequence", {}) == view_sequence.NO_VIEWS
    r_none = SP.unknown_reason("realtime-latency", {})
    r_bound = SP.unknown_reason("realtime-latency", {}, Options(realtime_bound=1.0))
    assert r_none != r_bound and "not decidable" not in (r_none, r_bound)


def test_a_reason_that_reads_an_ungiven_or_unheld_fact_is_named(monkeypatch):
    # causal order's reason reads whether the trace has sends
    with pytest.raises(ValueError, match="causal-order depends on the trace fact.*send"):
        SP.unknown_reason("causal-order", {})
    reg = dict(properties())
    reg["fifo-order"] = replace(reg["fifo-order"], reason=lambda c, ti, o: str(c.lines[ti]))
    reg["integrity"] = replace(reg["integrity"],
                               reason=lambda c, ti, o: str(c.trace_has["offset"][ti]))
    monkeypatch.setattr(SP, "properties", lambda: reg)
    with pytest.raises(ValueError, match="fifo-order reads the chunk's 'lines'"):
        SP.unknown_reason("fifo-order", {"send": True})
    with pytest.raises(ValueError, match="integrity reads the trace fact 'offset'.*FACTS"):
        SP.unknown_reason("integrity", {"send": True})
