"""Each recorder's declaration (tomkit/record/system.py): what ``python -m tomkit.record``
reads, with no probing of a module's attributes."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from tomkit.checker.profiles import builtin
from tomkit.record import SYSTEMS
from tomkit.record.__main__ import main, recorder
from tomkit.record.faults import CYCLE, SCHEDULES
from tomkit.record.system import System


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_recorder_declares_itself(name):
    system = recorder(name)
    assert isinstance(system, System) and system.name == name
    assert any(not run.faults for run in system.runs.values())  # a run without faults
    assert set(system.actions) <= {f.action for f in CYCLE}
    # every run of the schedule the recorder can inflict is offered under its own name
    for run, faults in SCHEDULES.items():
        if all(f.action in system.actions for f in faults) and name not in (
                "corosync", "jgroups"):  # theirs are named for their stacks
            assert run in system.runs, run
    for run in system.runs.values():
        args = system.guarantee(run)
        if args[0] == "--guarantee-file":
            assert Path(args[1]).is_file()
        else:
            assert args == ["--guarantee", args[1]] and args[1] in builtin()
    if system.long_runs:  # --long builds its run from the clean one
        assert {"send_for", "period"} <= {f.name for f in fields(system.runs["clean"])}


def test_a_system_declares_one_guarantee():
    with pytest.raises(ValueError, match="one of them"):
        System("x", {}, (), print, lambda: None)


def test_long_runs_are_refused_where_not_declared(capsys):
    assert main(["etcd", "--long", "5"]) == 2
    err = capsys.readouterr().err
    assert "etcd has no long runs" in err and "zookeeper" in err
