"""Record JGroups (2.12, Debian's libjgroups-java) as a delivery trace.

Each member ``j1``, ``j2``, ... is one JVM running ``Member.java`` (compiled here with
javac against /usr/share/java/jgroups.jar) in a network namespace of its own
(:mod:`tomkit.record.netns`, address 10.215.0.<i>): TCP with TCPPING on port 7800,
failure detection by FD_SOCK and FD, reliable FIFO multicast by NAKACK, membership
by GMS; the stack written by :func:`stack_xml`, with or without SEQUENCER (total order
through the coordinator) and with or without pbcast.FLUSH (virtual synchrony: the group
stops sending and flushes before each new view). The member prints, in its own order,
the views GMS installs (view id ``coordinator|n``), its sends (before
``JChannel.send``) and its deliveries (``receive``); the recorder keeps that order and
the member's clock.

``j1`` starts first, so it is the coordinator (and with SEQUENCER the sequencer). Runs:

* ``sequencer``, ``sequencer-flush``: what JGroups' manual offers for total order;
* ``no-sequencer``, ``no-sequencer-flush``: the negative control: NAKACK orders each
  sender's messages (FIFO) and nothing else, so concurrent senders are delivered in
  different orders and the checker must flag total order;
* ``sequencer-kill``, ``sequencer-flush-kill``: the sequencer ``j1`` is SIGKILLed when
  half the messages are sent; the recorder logs its ``crash`` after its last line;
* ``sequencer-flush-kill-member``: the same with the last member killed instead of the
  sequencer;
* ``sequencer-flush-pause-leader``, ``sequencer-flush-pause-follower``: the sequencer,
  or the last member, is stopped (SIGSTOP) for 3 s when half the messages are sent,
  longer than failure detection (FD: 2 x 1 s), then continued;
* ``sequencer-flush-partition-leader``, ``sequencer-flush-partition-follower``: the
  sequencer's, or the last member's, namespace is cut off from the others' for 8 s,
  then healed; each side installs a view of its own, and MERGE2 merges them after the
  heal (the recorder waits for the merged view); a message is owed to the members of
  a view it was delivered in, as for Corosync;
* ``sequencer-flush-late-join``: one more member joins when half the messages are sent,
  and sends its own; it owes nothing for the views before its first (Chockler, Keidar
  and Vitenberg 2001, section 4), so agreement, validity and liveness judge it from there.

At the end the recorder waits until every survivor delivered every survivor's messages
and deliveries settled, or the deadline.

What JGroups documents: SEQUENCER, "Implementation of total order protocol using a
sequencer" (its javadoc; messages are forwarded to the coordinator, which multicasts
them, and a member keeps those not yet acknowledged in a forward table and resends them
to the next coordinator); pbcast.NAKACK, lossless FIFO delivery per sender; pbcast.FLUSH
(its javadoc, 2.x to 4.x): "Before installing a new view V2, flushing would ensure that
all messages *sent* in the current view V1 are indeed *delivered* in V1, rather than in
V2 (in all non-faulty members). This is essentially Virtual Synchrony." The profiles,
one per stack, are the TOML files beside this module (``tomkit check --guarantee-file``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tomkit.record.child import EventReader, audience, drain, until
from tomkit.record.faults import SCHEDULES, Fault, FaultRunner, Unsupported
from tomkit.record.log import EventLog, die_with_parent
from tomkit.record.netns import Network
from tomkit.record.netns import available as netns_available
from tomkit.record.system import System

__all__ = ["SYSTEM", "RUNS", "PROFILE", "JgroupsRun", "record", "available", "stack_xml",
           "profile_file", "ACTIONS"]

HERE = Path(__file__).parent
JAR = Path("/usr/share/java/jgroups.jar")
#: seconds the recorder waits, after a partition healed, for MERGE2 to merge the views
MERGE_WAIT = 40.0
#: the built-in profile the no-sequencer control is judged by (and must fail)
PROFILE = "atomic-broadcast"


@dataclass(frozen=True)
class JgroupsRun:
    """One recorded run's shape."""

    name: str
    sequencer: bool = True
    flush: bool = False
    members: int = 3
    messages: int = 30       # per member
    pause_ms: int = 5        # between a member's sends
    late_joiner: bool = False  # one more member joins when half the messages are sent
    faults: tuple[Fault, ...] = ()  # the fault schedule (tomkit/record/faults.py); the
    # leader is the sequencer (the coordinator), a follower the last other member


#: the faults this recorder can inflict (a restarted JVM is a new member, which the
#: late-join run covers)
ACTIONS = ("kill", "pause", "partition")


RUNS = {
    "sequencer": JgroupsRun("sequencer"),
    "sequencer-flush": JgroupsRun("sequencer-flush", flush=True),
    "no-sequencer": JgroupsRun("no-sequencer", sequencer=False),
    "no-sequencer-flush": JgroupsRun("no-sequencer-flush", sequencer=False, flush=True),
    "sequencer-kill": JgroupsRun("sequencer-kill", faults=SCHEDULES["kill-leader"]),
    "sequencer-flush-kill": JgroupsRun("sequencer-flush-kill", flush=True,
                                       faults=SCHEDULES["kill-leader"]),
    "sequencer-flush-kill-member": JgroupsRun("sequencer-flush-kill-member", flush=True,
                                              faults=SCHEDULES["kill-follower"]),
    "sequencer-flush-pause-leader": JgroupsRun("sequencer-flush-pause-leader", flush=True,
                                               faults=SCHEDULES["pause-leader"]),
    "sequencer-flush-pause-follower": JgroupsRun("sequencer-flush-pause-follower",
                                                 flush=True,
                                                 faults=SCHEDULES["pause-follower"]),
    # slower and longer, so that the members still send while cut off (8 s)
    "sequencer-flush-partition-leader": JgroupsRun(
        "sequencer-flush-partition-leader", flush=True, messages=150, pause_ms=60,
        faults=SCHEDULES["partition-leader"]),
    "sequencer-flush-partition-follower": JgroupsRun(
        "sequencer-flush-partition-follower", flush=True, messages=150, pause_ms=60,
        faults=SCHEDULES["partition-follower"]),
    # slower senders, so that the joiner's JVM is up while they still send
    "sequencer-flush-late-join": JgroupsRun("sequencer-flush-late-join", flush=True,
                                            late_joiner=True, pause_ms=60),
}


def profile_file(run: JgroupsRun) -> Path:
    """The guarantee file of what JGroups documents for this stack."""
    if run.sequencer:
        return HERE / ("jgroups-flush.toml" if run.flush else "jgroups-sequencer.toml")
    return HERE / ("jgroups-fifo-flush.toml" if run.flush else "jgroups-fifo.toml")


def available() -> str | None:
    """None if JGroups can run here; else why not."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        return "javac is not installed (Debian: apt-get install openjdk-17-jdk-headless)"
    if not JAR.exists():
        return f"{JAR} is missing (Debian: apt-get install libjgroups-java)"
    return netns_available()


def stack_xml(run: JgroupsRun, host: str, hosts: list[str], port: int = 7800) -> str:
    """The protocol stack of one member (JGroups 2.12's tcp.xml, shortened timeouts),
    bound to ``host``, finding the others at ``hosts``, with SEQUENCER and FLUSH as the
    run asks."""
    initial = ",".join(f"{h}[{port}]" for h in hosts)
    seq = "  <SEQUENCER/>\n" if run.sequencer else ""
    flush = "  <pbcast.FLUSH timeout=\"2000\"/>\n" if run.flush else ""
    return f"""<config xmlns="urn:org:jgroups">
  <TCP bind_addr="{host}" bind_port="{port}" port_range="0" loopback="true"
       enable_diagnostics="false" enable_bundling="true" max_bundle_timeout="5"
       use_send_queues="true" sock_conn_timeout="300" timer_type="new"
       timer.min_threads="2" timer.max_threads="4"
       thread_pool.enabled="true" thread_pool.min_threads="1" thread_pool.max_threads="4"
       thread_pool.queue_enabled="false" thread_pool.rejection_policy="run"
       oob_thread_pool.enabled="true" oob_thread_pool.min_threads="1"
       oob_thread_pool.max_threads="4" oob_thread_pool.queue_enabled="false"
       oob_thread_pool.rejection_policy="run"/>
  <TCPPING timeout="2000" initial_hosts="{initial}" port_range="0"
           num_initial_members="{run.members}"/>
  <MERGE2 min_interval="5000" max_interval="10000"/>
  <FD_SOCK bind_addr="{host}"/>
  <FD timeout="1000" max_tries="2"/>
  <VERIFY_SUSPECT timeout="500"/>
  <BARRIER/>
  <pbcast.NAKACK use_mcast_xmit="false" gc_lag="0" retransmit_timeout="300,600,1200"
                 discard_delivered_msgs="true"/>
  <UNICAST timeout="300,600,1200"/>
  <pbcast.STABLE stability_delay="500" desired_avg_gossip="5000" max_bytes="1M"/>
  <pbcast.GMS print_local_addr="false" join_timeout="2000" view_bundling="true"/>
{seq}  <UFC max_credits="2M" min_threshold="0.4"/>
  <MFC max_credits="2M" min_threshold="0.4"/>
  <FRAG2 frag_size="60K"/>
{flush}</config>
"""


def compile_member(folder: Path) -> Path:
    r = subprocess.run(["javac", "-d", str(folder), "-cp", str(JAR),
                        str(HERE / "Member.java")], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"javac Member.java failed:\n{r.stderr}")
    return folder


def record(run: JgroupsRun, out: str | Path, *, seed: int = 1, timeout: float = 60.0,
           workdir: str | Path | None = None, say=print) -> EventLog:
    """Record one run into ``out``; the log. ``seed`` names the run (the JVMs'
    schedule is not seeded)."""
    why = available()
    if why:
        raise RuntimeError(why)
    names = [f"j{i + 1}" for i in range(run.members)]
    net = Network(names + ([f"j{run.members + 1}"] if run.late_joiner else []))
    try:
        net.up()
        return _record(run, out, net, seed, timeout, workdir, say)
    finally:
        net.down()


def _record(run: JgroupsRun, out: str | Path, net: Network, seed: int, timeout: float,
            workdir: str | Path | None, say) -> EventLog:
    deadline = time.monotonic() + timeout
    log = EventLog(f"jgroups-{run.name}-s{seed}")
    tmp = Path(tempfile.mkdtemp(prefix="tomkit-jgroups-", dir=workdir))
    members: list[EventReader] = []
    files = []
    stop = threading.Event()
    try:
        classes = compile_member(tmp)
        names = [f"j{i + 1}" for i in range(run.members)]
        every = net.servers
        hosts = [net.address(n) for n in every]

        def start(name: str) -> EventReader:
            stack = tmp / f"{name}.xml"
            stack.write_text(stack_xml(run, net.address(name), hosts))
            err = open(tmp / f"{name}.stderr", "wb")
            files.append(err)
            proc = subprocess.Popen(net.argv(name, [
                "java", "-Xmx96m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djava.net.preferIPv4Stack=true", f"-Djgroups.bind_addr={net.address(name)}",
                "-cp", f"{JAR}:{classes}", "Member", name, str(stack)]),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                preexec_fn=die_with_parent)
            reader = EventReader(name, proc, log, tmp / f"{name}.events")
            reader.start()
            members.append(reader)
            return reader

        for k, name in enumerate(names):
            reader = start(name)
            # one member at a time, each joining the group the first (the coordinator,
            # the sequencer) formed: started together on a loaded machine, members have
            # timed out in discovery and formed groups of their own, merged only by
            # MERGE2 many seconds later
            until(lambda r=reader, want=names[:k + 1]: r.events.get("ready")
                  and set(want) <= set(r.members), deadline,
                  f"jgroups: {name} did not join {', '.join(names[:k])}".rstrip(", ")
                  if k else "jgroups: j1 did not start", tmp)
        until(lambda: all(m.members == names for m in members), deadline,
              "jgroups: the group did not form", tmp)
        for m in members:
            m.command(f"go {run.messages} {run.pause_ms}")
        group = _Group(members, log, net)
        if run.faults:
            total = run.members * run.messages
            faults = FaultRunner(run.faults, group, log, progress=lambda: sum(
                len(m.sent_msgs) for m in members) / total, deadline=deadline, say=say,
                stop=stop)
            faults.start()
            faults.done.wait(max(0.0, deadline - time.monotonic()))
            if faults.error is not None:
                raise RuntimeError(f"jgroups: fault schedule: {faults.error}")
        killed = [m for m in members if m.process in group.dead]
        late = None
        if run.late_joiner:
            total = run.members * run.messages
            until(lambda: sum(len(m.sent_msgs) for m in members) >= total // 2, deadline,
                  "jgroups: sending stalled", tmp)
            say(f"  {every[-1]} joins after {sum(len(m.sent_msgs) for m in members)} sends")
            late = start(every[-1])
            until(lambda: late.members == every, deadline,
                  f"jgroups: {every[-1]} did not join", tmp)
            late.command(f"go {run.messages} {run.pause_ms}")
        alive = [m for m in members if m not in killed]
        until(lambda: all(m.events.get("done") for m in alive), deadline,
              "jgroups: the survivors did not finish sending", tmp)
        for k in killed:
            until(lambda k=k: all(k.process not in m.members for m in alive), deadline,
                  f"jgroups: the survivors did not install a view without {k.process}", tmp)
        split = any(f.action == "partition" for f in run.faults)
        if split:  # healed: MERGE2 merges the sides' views (every 5-10 s), or fails to
            merge_by = min(deadline, time.monotonic() + MERGE_WAIT)
            while time.monotonic() < merge_by and not all(m.members == names
                                                          for m in alive):
                time.sleep(0.1)
            if not all(m.members == names for m in alive):
                say(f"  warning: the group did not merge within {MERGE_WAIT:g} s of the "
                    f"heal (views: {', '.join(f'{m.process} {m.members}' for m in alive)})")
        drain(alive, deadline, say, owed=(
            (lambda reader, sent: sent & audience(log, reader.process)) if split
            else None if late is None
            else lambda reader, sent: sent if reader is not late
            else sent & _sent_in_views_with(log, late.process)))
    finally:
        log.freeze()
        stop.set()
        for m in members:
            if m.proc.poll() is None:
                m.proc.send_signal(signal.SIGCONT)  # a paused JVM, to be killed
                m.proc.kill()
            m.proc.wait()
        for f in files:
            f.close()
        if not os.environ.get("TOMKIT_KEEP_RECORD"):
            shutil.rmtree(tmp, ignore_errors=True)
    log.write(out)
    return log


class _Group:
    """The members seen by the fault schedule (:class:`tomkit.record.faults.Cluster`):
    the leader is the coordinator of the newest view a running member installed (with
    SEQUENCER, the sequencer)."""

    def __init__(self, members: list[EventReader], log: EventLog, net: Network):
        self.members = {m.process: m for m in members}
        self.log, self.net = log, net
        self.dead: set[str] = set()
        self.paused: set[str] = set()

    def process(self, server: str) -> str:
        return server

    def leader(self) -> str | None:
        views = [r for r in list(self.log.records) if r["kind"] == "view"
                 and r["process"] in self.running()]
        return views[-1]["view"].split("|")[0] if views else None

    def running(self) -> list[str]:
        return [n for n, m in self.members.items() if n not in self.dead
                and n not in self.paused and n not in self.net.cut and m.proc.poll() is None]

    def kill(self, server: str) -> None:
        m = self.members[server]
        m.proc.send_signal(signal.SIGKILL)
        m.proc.wait()
        m.join(5)
        self.dead.add(server)
        self.log.add(server, "crash")

    def pause(self, server: str) -> None:
        self.members[server].proc.send_signal(signal.SIGSTOP)
        self.paused.add(server)

    def resume(self, server: str) -> None:
        self.members[server].proc.send_signal(signal.SIGCONT)
        self.paused.discard(server)

    def isolate(self, server: str) -> None:
        self.net.isolate(server)

    def heal(self, server: str) -> None:
        self.net.heal(server)

    def restart(self, server: str) -> None:
        raise Unsupported("a restarted JGroups member is a new member: see the late-join run")


def _sent_in_views_with(log: EventLog, joiner: str) -> set[str]:
    """The messages sent in a view that includes ``joiner``: what it is owed."""
    inside: set[str] = set()
    owed = set()
    for r in list(log.records):
        if r["kind"] == "view" and joiner in r["members"]:
            inside.add(r["process"])
        elif r["kind"] == "send" and r["process"] in inside:
            owed.add(r["msg"])
    return owed


#: what this recorder provides (tomkit/record/system.py)
SYSTEM = System("jgroups", RUNS, ACTIONS, record, available, profile_file=profile_file)
