"""The Spark engines' properties are the registry's: every property the scan decides
(``Property.scan``) has a DataFrame form in the SQL engine or is declared as handed to the
exact check, and the forms name no property the registry does not have."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from tomkit.checker.properties import properties  # noqa: E402
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
