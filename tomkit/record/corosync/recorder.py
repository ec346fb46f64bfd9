"""Record Corosync's closed process groups (CPG, Totem) as a delivery trace.

Each of ``nodes`` Corosync 3 instances (Debian's corosync) runs in a network namespace
of its own (:mod:`tomkit.record.netns`), ``tomkit-<pid>-n<i>``, with one address
10.215.0.<i>/24 on a veth whose other end sits on a bridge in a hub namespace
``tomkit-<pid>-hub``; nothing is configured outside these namespaces, and the recorder
deletes them at the end (and any left by a recorder that died). Corosync's IPC sockets
are abstract Unix sockets, so each namespace has its own Corosync; each instance gets a
private ``/run`` (its pid file) and its own state folder.

In each namespace one client, ``cpgclient.c`` (compiled here with gcc against libcpg),
joins the group ``tomkit`` and prints, in its own order, CPG's configuration changes
(``view``), its sends (before ``cpg_mcast_joined``, ``CPG_TYPE_AGREED``) and CPG's
deliveries. The client of node i is process ``n<i>``; the trace keeps its order and its
clock. CPG names no view: the recorder names each configuration change by the Totem ring
it arrived in and its member set (``<ring node>.<ring seq>:n1+n2+...``), so the view ids
of two processes agree exactly when ring and members do (view-agreement then judges
self-inclusion); ``x_left`` and ``x_joined`` carry CPG's lists with their reasons
(1 join, 2 leave, 3 node down, 4 node up, 5 process down).

Run ``kill-member``: when half the messages are sent, node 3's Corosync is SIGKILLed;
its client loses the connection and stops, and the recorder logs its ``crash`` after the
client's last line. Runs ``pause-follower`` (node 3's Corosync stopped 3 s, beyond the
1 s token timeout), ``partition-follower`` and ``partition-leader`` (node 3's, or node
1's, veth taken down on the hub's bridge for 3 s) follow the common fault schedule
(:mod:`tomkit.record.faults`). Run ``leave-member``: at the same point node 3's client leaves the
group (``cpg_leave``), logging ``leave`` first; its Corosync stays in the ring.

At the end the recorder waits until the survivors' deliveries stop
changing (drained).

What CPG promises: agreed (total) order and extended virtual synchrony (Corosync's
cpg_overview(3) and cpg_mcast_joined(3): CPG_TYPE_AGREED; Moser, Amir, Melliar-Smith and
Agarwal, "Extended virtual synchrony", ICDCS 1994): the ``totem-evs`` profile.
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
from tomkit.record.netns import SUBNET, Network
from tomkit.record.netns import available as netns_available
from tomkit.record.system import System

__all__ = ["SYSTEM", "RUNS", "PROFILE", "CpgRun", "record", "available", "ACTIONS"]

PROFILE = "totem-evs"
HERE = Path(__file__).parent


@dataclass(frozen=True)
class CpgRun:
    """One recorded run's shape."""

    name: str
    nodes: int = 3
    messages: int = 40        # per node
    pause: float = 0.01       # between a node's sends, seconds
    leave: str | None = None  # the node whose client leaves the group halfway
    faults: tuple[Fault, ...] = ()  # the fault schedule (tomkit/record/faults.py); Totem
    # has no leader: the "leader" is the ring's representative (the lowest node id)


#: the faults this recorder can inflict (a restarted Corosync is not recorded)
ACTIONS = ("kill", "pause", "partition")


RUNS = {
    "clean": CpgRun("clean"),
    "kill-member": CpgRun("kill-member", faults=SCHEDULES["kill-follower"]),
    "pause-follower": CpgRun("pause-follower", faults=SCHEDULES["pause-follower"]),
    # slower and longer, so that the nodes still send while cut off (8 s)
    "partition-follower": CpgRun("partition-follower", messages=300, pause=0.03,
                                 faults=SCHEDULES["partition-follower"]),
    "partition-leader": CpgRun("partition-leader", messages=300, pause=0.03,
                               faults=SCHEDULES["partition-leader"]),
    "leave-member": CpgRun("leave-member", leave="n3"),
}


def _run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=20)


def available() -> str | None:
    """None if Corosync can run here; else why not (with the system's own error)."""
    for tool in ("corosync", "gcc", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt-get install corosync libcpg-dev " \
                   "iproute2 gcc)"
    if not Path("/usr/include/corosync/cpg.h").exists():
        return "libcpg-dev is not installed (no /usr/include/corosync/cpg.h)"
    return netns_available()


def compile_client(folder: Path) -> Path:
    exe = folder / "cpgclient"
    r = subprocess.run(["gcc", "-O2", "-Wall", "-o", str(exe), str(HERE / "cpgclient.c"),
                        "-lcpg"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"gcc cpgclient.c failed:\n{r.stderr}")
    return exe


def _config(n: int, state: Path) -> str:
    nodes = "\n".join(f"  node {{\n    ring0_addr: {SUBNET}.{i}\n    nodeid: {i}\n"
                      f"    name: n{i}\n  }}" for i in range(1, n + 1))
    return f"""totem {{
  version: 2
  cluster_name: tomkit
  transport: knet
  crypto_cipher: none
  crypto_hash: none
  token: 1000
}}
nodelist {{
{nodes}
}}
logging {{
  to_stderr: yes
  to_syslog: no
  to_logfile: no
}}
system {{
  state_dir: {state}
}}
"""


class _Client(EventReader):
    """One node's CPG client; names its views by the Totem ring (module docstring)."""

    def __init__(self, name: str, proc: subprocess.Popen, log: EventLog, raw: Path):
        super().__init__(name, proc, log, raw)
        self.ring: str | None = None
        self.pending: list[dict] = []  # views waiting for their ring's name

    def event(self, ev: dict) -> None:
        if ev["ev"] == "totem":
            self.ring = ev["ring"]
            for rec in self.pending:
                rec["view"] = f"{ev['ring']}:{'+'.join(rec['members'])}"
                rec["x_ring"] = ev["ring"]
            self.pending = []
        else:
            super().event(ev)

    def view(self, ev: dict) -> dict | None:
        members = self.members
        node_change = any(r in (3, 4) for _, _, r in ev["left"] + ev["joined"])
        if node_change and self.pending and self.pending[-1]["members"] == members:
            # CPG reports a merge of several nodes as one change per node, the member
            # list already complete in the first: one view, the lists merged
            self.pending[-1]["x_left"] += ev["left"]
            self.pending[-1]["x_joined"] += ev["joined"]
            return None
        rec = self.log.add(self.process, "view", view=f"{ev['ring']}:{'+'.join(members)}",
                           members=members, time=ev["time"], x_left=ev["left"],
                           x_joined=ev["joined"])
        # a change of nodes (reason 3 or 4), or the first view, reaches CPG before Totem
        # reports the new ring: such a view is named by the ring that follows
        if rec is not None and (self.ring is None or node_change):
            self.pending.append(rec)
        return rec


class _Ring:
    """The nodes seen by the fault schedule (:class:`tomkit.record.faults.Cluster`).
    Totem has no leader; the ring's representative is its lowest node id, so a
    ``leader`` fault strikes the lowest running node. A partition takes the node's veth
    down on the hub's bridge."""

    def __init__(self, net: Network, daemons: list[subprocess.Popen],
                 clients: list[_Client], log: EventLog, deadline: float):
        self.net, self.daemons, self.log, self.deadline = net, daemons, log, deadline
        self.clients = {c.process: c for c in clients}
        self.names = [c.process for c in clients]
        self.dead: set[str] = set()
        self.off: set[str] = set()  # paused or partitioned

    def process(self, server: str) -> str:
        return server

    def leader(self) -> str | None:
        running = self.running()
        return running[0] if running else None

    def running(self) -> list[str]:
        return [n for n in self.names if n not in self.dead and n not in self.off]

    def kill(self, server: str) -> None:
        d = self.daemons[self.names.index(server)]
        d.send_signal(signal.SIGKILL)
        d.wait()
        self.dead.add(server)
        c = self.clients[server]
        c.join(max(1.0, self.deadline - time.monotonic()))
        self.log.add(server, "crash")

    def pause(self, server: str) -> None:
        self.daemons[self.names.index(server)].send_signal(signal.SIGSTOP)
        self.off.add(server)

    def resume(self, server: str) -> None:
        self.daemons[self.names.index(server)].send_signal(signal.SIGCONT)
        self.off.discard(server)

    def _link(self, server: str, state: str) -> None:
        i = self.names.index(server) + 1
        r = _run("ip", "-n", self.net.hub, "link", "set", f"v{i}", state)
        if r.returncode != 0:
            raise RuntimeError(f"ip link set v{i} {state}: {r.stderr.strip()}")

    def isolate(self, server: str) -> None:
        self._link(server, "down")
        self.off.add(server)

    def heal(self, server: str) -> None:
        self._link(server, "up")
        self.off.discard(server)

    def restart(self, server: str) -> None:
        raise Unsupported("a restarted Corosync node is not recorded")


def record(run: CpgRun, out: str | Path, *, seed: int = 1, timeout: float = 60.0,
           workdir: str | Path | None = None, say=print) -> EventLog:
    """Record one run into ``out``; the log, for the caller's summary. ``seed`` names the
    run (Corosync's schedule is not seeded)."""
    why = available()
    if why:
        raise RuntimeError(why)
    deadline = time.monotonic() + timeout
    log = EventLog(f"corosync-{run.name}-s{seed}")
    tmp = Path(tempfile.mkdtemp(prefix="tomkit-corosync-", dir=workdir))
    net = Network([f"n{i}" for i in range(1, run.nodes + 1)])
    daemons: list[subprocess.Popen] = []
    clients: list[_Client] = []
    stop = threading.Event()
    files = []
    try:
        exe = compile_client(tmp)
        net.up()
        for i, ns in enumerate(net.namespaces.values(), 1):
            state = tmp / f"n{i}"
            state.mkdir()
            conf = tmp / f"n{i}.conf"
            conf.write_text(_config(run.nodes, state))
            f = open(tmp / f"n{i}.log", "wb")
            files.append(f)
            daemons.append(subprocess.Popen(
                ["ip", "netns", "exec", ns, "sh", "-c",
                 f"mount -t tmpfs tmpfs /run && exec corosync -f -c {conf}"],
                stdout=f, stderr=subprocess.STDOUT, preexec_fn=die_with_parent))
        for i, ns in enumerate(net.namespaces.values(), 1):
            err = open(tmp / f"n{i}.client.log", "wb")
            files.append(err)
            proc = subprocess.Popen(["ip", "netns", "exec", ns, str(exe), "tomkit"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=err, text=True, preexec_fn=die_with_parent)
            clients.append(_Client(f"n{i}", proc, log, tmp / f"n{i}.events"))
        for c in clients:
            c.start()
        everyone = [f"n{i}" for i in range(1, run.nodes + 1)]
        until(lambda: all(c.members == everyone for c in clients), deadline,
               "corosync: the group did not form", tmp)
        for c in clients:
            c.command(f"go {run.messages} {int(run.pause * 1e6)}")
        killed = None
        if run.leave is not None:
            total = run.nodes * run.messages
            until(lambda: sum(len(c.sent_msgs) for c in clients) >= total // 2, deadline,
                  "corosync: sending stalled", tmp)
            killed = clients[everyone.index(run.leave)]
            say(f"  {run.leave} leaves the group after "
                f"{sum(len(c.sent_msgs) for c in clients)} sends")
            killed.command("quit")
            killed.join(max(1.0, deadline - time.monotonic()))
        ring = _Ring(net, daemons, clients, log, deadline)
        if run.faults:
            total = run.nodes * run.messages
            faults = FaultRunner(run.faults, ring, log, progress=lambda: sum(
                len(c.sent_msgs) for c in clients) / total, deadline=deadline, say=say,
                stop=stop)
            faults.start()
            faults.done.wait(max(0.0, deadline - time.monotonic()))
            if faults.error is not None:
                raise RuntimeError(f"corosync: fault schedule: {faults.error}")
        gone = [c for c in clients if c is killed or c.process in ring.dead]
        alive = [c for c in clients if c not in gone]
        until(lambda: all(len(c.sent_msgs) == run.messages for c in alive), deadline,
               "corosync: the survivors did not finish sending", tmp)
        for k in gone:
            until(lambda k=k: all(k.process not in c.members for c in alive), deadline,
                  "corosync: the survivors did not install a view without the node", tmp)
        # a message is owed to the members of a view it was delivered in
        drain(alive, deadline, say, owed=lambda reader, sent: sent & audience(log,
                                                                           reader.process))
    finally:
        log.freeze()
        stop.set()
        for c in clients:
            if c.proc.poll() is None:
                c.proc.kill()
            c.proc.wait()
        for d in daemons:
            if d.poll() is None:
                d.send_signal(signal.SIGCONT)  # a paused daemon, to be killed
                d.kill()
            d.wait()
        for f in files:
            f.close()
        net.down()
        if not os.environ.get("TOMKIT_KEEP_RECORD"):
            shutil.rmtree(tmp, ignore_errors=True)
    log.write(out)
    return log


#: what this recorder provides (tomkit/record/system.py)
SYSTEM = System("corosync", RUNS, ACTIONS, record, available, profile=PROFILE)
