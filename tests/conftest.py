"""Markers for the tests that need a Java virtual machine: ``spark`` (a Spark session) and
``tlc`` (the TLC model checker) both imply ``java``, so ``pytest -m "not java"`` is the
fast loop."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("spark") or item.get_closest_marker("tlc"):
            item.add_marker(pytest.mark.java)
