"""The suite's schedule (tests/xdist_schedule.py): groups longest first, a group's tests
together, unknown groups estimated, the durations file read and written back; and the
collection this process made is grouped the way `make test` runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import xdist_schedule as schedule
from locations import ROOT


def test_groups_go_longest_first_each_group_together_in_its_own_order():
    groups = ["a", "b", "a", "c", "b", "a"]
    cost = {"a": 1.0, "b": 30.0, "c": 5.0}
    assert schedule.longest_first(groups, cost) == [1, 4, 3, 0, 2, 5]
    # equal costs keep collection order
    assert schedule.longest_first(groups, dict.fromkeys("abc", 2.0)) == [0, 2, 5, 1, 4, 3]


def test_an_unknown_group_is_estimated_from_its_tests_at_the_mean_per_test():
    measured = {"slow.py": (90.0, 3), "fast.py": (10.0, 7)}
    got = schedule.costs({"slow.py": 3, "fast.py": 9, "new.py": 4}, measured)
    assert got == {"slow.py": 90.0, "fast.py": 10.0, "new.py": pytest.approx(40.0)}
    assert schedule.costs({"x.py": 2}, {}) == {"x.py": 2.0}  # no file: by count
    # a JVM or live-system group unknown to the file: at the mean of such groups
    got = schedule.costs({"slow.py": 3, "fast.py": 7, "jvm.py": 2, "new.py": 4}, measured,
                         heavy={"slow.py", "jvm.py"})
    assert got == {"slow.py": 90.0, "fast.py": 10.0, "jvm.py": 60.0, "new.py": 4.0 * 10 / 7}


def test_the_file_round_trips_and_a_bad_one_is_named(tmp_path):
    path = tmp_path / "durations.json"
    assert schedule.load(path) == {}
    a, b = "tests/test_xdist_schedule.py", schedule.CLUSTER_GROUP
    schedule.write(path, {a: 1.234, b: 9.0}, {a: 2, b: 1})
    assert schedule.load(path) == {a: (1.23, 2), b: (9.0, 1)}
    assert list(json.loads(path.read_text())["groups"]) == [b, a]
    # a partial run updates its groups and keeps the others; a module gone is dropped
    text = path.read_text().replace(a, "tests/test_no_such_module.py")
    path.write_text(text.replace("]\n}", "],\n " + json.dumps(a) + ": [2.0, 2]\n}"))
    assert set(schedule.load(path)) == {"tests/test_no_such_module.py", a, b}
    schedule.write(path, {a: 5.0}, {a: 3})
    assert schedule.load(path) == {a: (5.0, 3), b: (9.0, 1)}
    # a module now run whole in a shared group loses its own row
    schedule.write(path, {schedule.SESSION_GROUP: 4.0}, {schedule.SESSION_GROUP: 2},
                   absorbed=[a])
    assert schedule.load(path) == {schedule.SESSION_GROUP: (4.0, 2), b: (9.0, 1)}
    path.write_text('{"groups": {"a.py": 3}}')
    with pytest.raises(ValueError, match=r"durations.json: 'groups' must map"):
        schedule.load(path)


def test_a_partial_run_records_only_the_groups_it_ran_whole():
    seconds = {"a.py": 3.0, "b.py": 1.5, "c.py": 0.2}
    assert schedule.whole(seconds, {"a.py": 4, "b.py": 1, "c.py": 1},
                          {"a.py": 4, "b.py": 2, "c.py": 1}) == {"a.py": 3.0, "c.py": 0.2}
    assert schedule.whole(seconds, {"a.py": 4}, {}) == {"a.py": 3.0}  # not collected here


def test_the_cluster_users_share_a_group_the_rest_go_by_module():
    assert schedule.group_of("tests/x/test_a.py::test_b[1]", ["tmp_path"]) == \
        "tests/x/test_a.py"
    assert schedule.group_of("tests/x/test_a.py::T::test_b", ["spark_cluster"]) == \
        schedule.CLUSTER_GROUP


def test_the_modules_of_the_local_spark_session_share_a_group():
    """A module with a user of the session's ``spark`` fixture goes whole (its other tests
    too) into one group; the cluster's users keep theirs."""
    rows = [("tests/s/test_a.py::test_pure", ["tmp_path"]),
            ("tests/s/test_a.py::test_scan", ["spark", "tmp_path"]),
            ("tests/s/test_b.py::test_scan[1]", ["spark"]),
            ("tests/s/test_b.py::test_submit", ["spark_cluster"]),
            ("tests/s/test_c.py::test_other", ["tmp_path"])]
    assert schedule.groups_of(rows) == [schedule.SESSION_GROUP] * 3 + [
        schedule.CLUSTER_GROUP, "tests/s/test_c.py"]


def test_the_committed_file_names_groups_that_exist():
    measured = schedule.load()
    assert measured, "tests/durations.json is missing"
    for group, (seconds, tests) in measured.items():
        assert seconds >= 0 and tests >= 0, group
        assert group in schedule.GROUPS or (ROOT / group).is_file(), \
            f"{group}: no such test module (make test-durations rewrites the file)"


def test_a_worker_collection_is_grouped_and_longest_first(tmp_path):
    """What an xdist worker collects under --dist loadgroup: the worker's config says
    ``dist`` "no" and ``loadgroup`` True, and the grouping must still be made."""
    code = (
        "import sys, pytest\n"
        "class P:\n"
        "    def pytest_configure(self, config):\n"
        "        config.option.loadgroup = True\n"
        "    def pytest_collection_finish(self, session):\n"
        "        for it in session.items:\n"
        "            g = [m.args[0] for m in it.iter_markers('xdist_group')]\n"
        "            print('ITEM', it.nodeid, g[0] if g else '-')\n"
        "sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider',\n"
        "                      'tests/test_xdist_schedule.py', 'tests/specs/test_specs.py'],\n"
        "                     plugins=[P()]))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [ln.split()[1:] for ln in out.stdout.splitlines() if ln.startswith("ITEM ")]
    assert rows and all(node.split("::")[0] == group for node, group in rows)
    modules = [group for _, group in rows]
    # each module's tests together, and the TLC specs (minutes) before this module
    assert modules == sorted(modules, key=modules.index)
    assert modules[0] == "tests/specs/test_specs.py"


def test_two_workers_keep_each_module_on_one_worker(tmp_path):
    """The grouping as xdist applies it, in a real two-worker run of two modules: each
    module's tests on one worker (pytest 9.2 with pytest-xdist 3.8 loses the groups
    silently, pyproject.toml); and the controller records each group's seconds."""
    mods = ["tests/model/test_membership_events.py", "tests/checker/test_properties.py"]
    record = tmp_path / "durations.json"
    out = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup",
                          "-p", "no:cacheprovider", "-v", "--record-durations", str(record),
                          *mods], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    workers: dict[str, set[str]] = {}
    for ln in out.stdout.splitlines():
        if ln.startswith("[gw") and "PASSED" in ln:
            node = ln.split("PASSED ", 1)[1].split()[0]
            workers.setdefault(node.split("::")[0], set()).add(ln.split("]")[0][1:])
    assert set(workers) == set(mods), out.stdout[-3000:]
    assert all(len(w) == 1 for w in workers.values()), workers
    measured = schedule.load(record)
    assert set(measured) == set(mods)
    for mod in mods:  # every test counted once, in its module's group
        assert measured[mod][1] == sum(len(ln.split("PASSED ")) - 1 for ln in
                                       out.stdout.splitlines() if f"PASSED {mod}::" in ln)
        assert measured[mod][0] > 0
