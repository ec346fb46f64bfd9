"""The order in which `make test`'s xdist workers take the suite's groups.

`--dist loadgroup` keeps a group (a test module, the users of the session's Spark
cluster, or the modules that share the session's local Spark session) on one worker, so
that its fixtures (a Spark session, a data set, a booted RabbitMQ cluster) are built
once; a worker that finishes a group takes the next one in collection order. With groups
of very unequal length (a few minutes for the RabbitMQ or Spark modules, milliseconds
for most), the suite ends when its last long group ends: taken last, a long group leaves
the other worker idle. So the groups are put longest first (Graham's LPT rule, "Bounds
on multiprocessing timing anomalies", SIAM J. Appl. Math. 17(2), 1969, section 4: within
4/3 of the best schedule), their lengths read from tests/durations.json, the seconds
each group took in a full run, rewritten by
`pytest -n 2 --dist loadgroup --record-durations` (or `make test-durations`). A group
the file does not know yet (a new module) is estimated from its number of tests at the
file's mean seconds per test of its kind: heavy (a JVM or a live system) or not.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from locations import TESTS

#: the measured seconds of each group in a full run, and its number of tests
DURATIONS = TESTS / "durations.json"
#: tests that start the session's Spark standalone cluster: one xdist group, so that one
#: worker starts it once
CLUSTER_GROUP = "spark-cluster"
#: the modules whose tests run in the session's local Spark session (the ``spark`` fixture
#: of conftest.py): one xdist group, so that one worker starts its JVM once
SESSION_GROUP = "spark-session"
GROUPS = (CLUSTER_GROUP, SESSION_GROUP)


def module_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def group_of(nodeid: str, fixturenames: Iterable[str] = (),
             session_modules: frozenset[str] | set[str] = frozenset()) -> str:
    """The xdist group of a test: the cluster's users share one; every test of a module
    with a user of the local Spark session (``session_modules``) shares another; else
    its module."""
    if "spark_cluster" in fixturenames:
        return CLUSTER_GROUP
    module = module_of(nodeid)
    return SESSION_GROUP if module in session_modules else module


def groups_of(items: Iterable[tuple[str, Iterable[str]]]) -> list[str]:
    """The groups of tests given as (node id, fixture names), in order."""
    rows = [(nodeid, tuple(names)) for nodeid, names in items]
    session = {module_of(nodeid) for nodeid, names in rows if "spark" in names}
    return [group_of(nodeid, names, session) for nodeid, names in rows]


def load(path: Path = DURATIONS) -> dict[str, tuple[float, int]]:
    """Each group's seconds and number of tests, as measured; empty without the file."""
    if not path.exists():
        return {}
    doc = json.loads(path.read_text())
    try:
        return {g: (float(s), int(n)) for g, (s, n) in doc["groups"].items()}
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: 'groups' must map a group to [seconds, tests]: {e}") \
            from None


def costs(counts: dict[str, int], measured: dict[str, tuple[float, int]],
          heavy: frozenset[str] | set[str] = frozenset()) -> dict[str, float]:
    """The expected seconds of each group in ``counts`` (group -> its number of tests
    collected now): as measured, else its tests at the measured mean per test of its
    kind, ``heavy`` (a JVM or a live system: Spark, TLC, a recorded system) or not."""
    def mean(kind: bool) -> float | None:
        rows = [v for g, v in measured.items() if (g in heavy) == kind]
        tests = sum(n for _, n in rows)
        return sum(s for s, _ in rows) / tests if tests else None

    light = mean(False) or 1.0
    per_test = {False: light, True: max(mean(True) or 0.0, light)}
    return {g: measured[g][0] if g in measured else n * per_test[g in heavy]
            for g, n in counts.items()}


def longest_first(groups: list[str], cost: dict[str, float]) -> list[int]:
    """The positions of ``groups`` (one per test, in collection order) reordered so that
    the groups come longest first, each group's tests together in their own order."""
    first = {}
    for i, g in enumerate(groups):
        first.setdefault(g, i)
    return sorted(range(len(groups)), key=lambda i: (-cost[groups[i]], first[groups[i]], i))


def whole(seconds: dict[str, float], tests: dict[str, int],
          collected: dict[str, int]) -> dict[str, float]:
    """The groups of ``seconds`` that ran whole: each of the ``collected`` tests of the
    group reported (``tests``); a group not collected here needs one."""
    return {g: s for g, s in seconds.items() if tests.get(g, 0) >= collected.get(g, 1)}


def write(path: Path, seconds: dict[str, float], tests: dict[str, int],
          absorbed: Iterable[str] = ()) -> None:
    """Record each group's measured seconds and tests, longest first, over what the file
    held (a run of part of the suite updates its groups only); a group whose module is
    gone is dropped, and so is a module ``absorbed`` whole into a shared group (the run
    saw its tests in other groups only)."""
    gone = set(absorbed) - set(seconds)
    groups = {g: (s, n) for g, (s, n) in load(path).items()
              if g not in gone and (g in GROUPS or (TESTS.parent / g).is_file())}
    groups.update({g: (round(seconds[g], 2), tests[g]) for g in seconds})
    rows = sorted(groups, key=lambda g: (-groups[g][0], g))
    lines = [f" {json.dumps(g)}: [{groups[g][0]}, {groups[g][1]}]" for g in rows]
    path.write_text(
        '{"about": "seconds of each xdist group in a full `make test` run, and its tests '
        '(tests/xdist_schedule.py); rewritten by `make test-durations`",\n'
        '"groups": {\n' + ",\n".join(lines) + "\n}}\n")
