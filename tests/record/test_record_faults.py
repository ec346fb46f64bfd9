"""The common fault schedule (tomkit/record/faults.py) on a cluster of our own: which
server each fault strikes, what the trace records, and when."""

from __future__ import annotations

import time

from tomkit.record.faults import SCHEDULES, Fault, FaultRunner, Unsupported, repeating
from tomkit.record.log import EventLog


class Toy:
    """Three servers; the leader is whatever ``lead`` names; every action is logged."""

    def __init__(self, log: EventLog, lead: str = "s2", partitions: bool = True):
        self.log, self.lead, self.partitions = log, lead, partitions
        self.names = ["s1", "s2", "s3"]
        self.inc = dict.fromkeys(self.names, 0)
        self.dead: set[str] = set()
        self.off: set[str] = set()
        self.actions: list[tuple[str, str]] = []

    def leader(self):
        return self.lead

    def running(self):
        return [n for n in self.names if n not in self.dead | self.off]

    def process(self, server):
        return server if not self.inc[server] else f"{server}r{self.inc[server]}"

    def kill(self, server):
        self.actions.append(("kill", server))
        self.dead.add(server)
        self.log.add(self.process(server), "crash")

    def pause(self, server):
        self.actions.append(("pause", server))
        self.off.add(server)

    def resume(self, server):
        self.actions.append(("resume", server))
        self.off.discard(server)

    def isolate(self, server):
        if not self.partitions:
            raise Unsupported("no partitions here")
        self.actions.append(("isolate", server))
        self.off.add(server)

    def heal(self, server):
        self.actions.append(("heal", server))
        self.off.discard(server)

    def restart(self, server):
        self.actions.append(("restart", server))
        self.dead.discard(server)
        self.inc[server] += 1
        self.log.add(self.process(server), "join")


def run(faults, toy, log, progress=lambda: 1.0):
    runner = FaultRunner(faults, toy, log, progress=progress,
                         deadline=time.monotonic() + 30, say=lambda s: None)
    runner.start()
    assert runner.done.wait(30)
    runner.stop_event.set()
    runner.join(5)
    return runner


def test_kill_strikes_the_leader_and_its_crash_carries_the_fault():
    log = EventLog("t")
    for p in ("s1", "s2", "s3"):
        log.add(p, "view", view="v", members=["s1", "s2", "s3"])
    toy = Toy(log)
    runner = run(SCHEDULES["kill-leader"], toy, log)
    assert runner.error is None
    assert toy.actions == [("kill", "s2")]
    (crash,) = [r for r in log.records if r["kind"] == "crash"]
    assert crash["process"] == "s2"
    assert [n["fault"] for n in crash["x_fault"]] == ["kill"]
    assert crash["x_fault"][0]["role"] == "leader"


def test_a_follower_is_the_last_running_server_other_than_the_leader():
    log = EventLog("t")
    toy = Toy(log, lead="s3")
    run(SCHEDULES["kill-follower"], toy, log)
    assert toy.actions == [("kill", "s2")]


def test_pause_and_partition_end_after_their_hold_and_are_noted():
    log = EventLog("t")
    toy = Toy(log)
    t0 = time.monotonic()
    run((Fault("pause", "follower", hold=0.3), Fault("partition", "leader", hold=0.3)),
        toy, log)
    assert time.monotonic() - t0 >= 0.6
    assert toy.actions == [("pause", "s3"), ("resume", "s3"), ("isolate", "s2"),
                           ("heal", "s2")]
    log.add("s3", "deliver", msg="m")
    log.freeze()
    (rec,) = [r for r in log.records if r["process"] == "s3"]
    assert [n["fault"] for n in rec["x_fault"]] == ["pause", "end pause"]


def test_restart_brings_back_the_killed_server_as_a_new_process():
    log = EventLog("t")
    toy = Toy(log)
    run(SCHEDULES["kill-restart"], toy, log)
    assert toy.actions == [("kill", "s2"), ("restart", "s2")]
    (join,) = [r for r in log.records if r["kind"] == "join"]
    assert join["process"] == "s2r1"
    assert join["x_fault"][0]["fault"] == "restart"


def test_faults_wait_for_their_share_of_the_messages():
    log = EventLog("t")
    toy = Toy(log)
    sent = [0.0]
    runner = FaultRunner(SCHEDULES["kill-leader"], toy, log, progress=lambda: sent[0],
                         deadline=time.monotonic() + 30, say=lambda s: None)
    runner.start()
    time.sleep(0.3)
    assert toy.actions == []  # nothing before half the messages are sent
    sent[0] = 0.5
    assert runner.done.wait(60)
    runner.stop_event.set()
    assert toy.actions == [("kill", "s2")]


def test_an_impossible_fault_is_reported_not_skipped():
    log = EventLog("t")
    toy = Toy(log, partitions=False)
    runner = run(SCHEDULES["partition-follower"], toy, log)
    assert isinstance(runner.error, Unsupported)


def test_the_long_cycle_leaves_out_what_a_recorder_cannot_inflict():
    cycle = repeating(("kill", "pause", "restart"))
    assert {f.action for f in cycle} == {"kill", "pause", "restart"}
    assert [f.action for f in cycle].count("restart") == [f.action for f in cycle].count(
        "kill")
