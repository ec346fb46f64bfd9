"""Record etcd (Raft) as a delivery trace: puts are sends, each member's watch is its
delivery stream.

A cluster of ``members`` etcd servers (Debian's etcd-server, 3.4) runs with etcd's
default ports, each member in a network namespace of its own
(:mod:`tomkit.record.netns`: address 10.215.0.<i>, the recorder's clients in the hub
namespace), data in a temporary folder. Each member ``e1``, ``e2``, ... is one
process of the trace. ``writers`` client threads per member put keys through that
member's v3 HTTP/JSON gateway (urllib, no client library): each key is one
message, ``send`` logged just before the request. One watcher per member watches the
key prefix from revision 1 through the same member's gateway and logs ``deliver`` for
every PUT event, in the order the stream gives them (etcd's watch API promises
events ordered by revision, none dropped, none duplicated: etcd docs, "API
guarantees" and "Watch API"). Every member logs first the ``view`` that etcd reports
(``/v3/cluster/member/list``: the configured members, view id the cluster id);
etcd reports no other membership change, and a killed member stays configured.

A put is a transaction "create the key if it does not exist", retried on errors
with the same key until it succeeds or a deadline passes, so a put that timed out
during a leader election but was committed anyway is not written twice (which the
checker would flag as a duplicate delivery, integrity). Each ``send`` carries
``x_put``: ``ok``, ``exists`` (an earlier attempt had committed it) or ``failed:
...`` (the member was killed, or the deadline passed), and deliveries carry
``x_rev``, the revision etcd assigned.

Run ``kill-leader``: when half the messages are sent the recorder asks a member who
leads (``/v3/maintenance/status``) and SIGKILLs it; its watcher's stream breaks,
its writers' requests fail, and once both stopped the recorder logs its ``crash``.
Runs ``partition-leader`` and ``partition-follower`` cut the member's namespace off from
the other members' for 8 s (its own writers and watcher still reach it).

At the end the recorder waits until every surviving watcher has seen the cluster's
last revision (drained), so agreement and validity can be read at the end of the
trace.

What Raft promises is a replicated log (Ongaro and Ousterhout 2014, section 5.3-5.4:
State Machine Safety, every member applies the same entry at each index): the
``replicated-log`` profile. It promises no FIFO order across a member's concurrent
client threads, and no order between clients at all beyond the log's.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tomkit.record.faults import SCHEDULES, Fault, FaultRunner
from tomkit.record.log import EventLog, die_with_parent
from tomkit.record.netns import Network
from tomkit.record.netns import available as netns_available
from tomkit.record.system import System

__all__ = ["SYSTEM", "RUNS", "PROFILE", "EtcdRun", "record", "available", "ACTIONS"]

PREFIX = "tomkit/"
#: the profile of what etcd documents (checker/profiles)
PROFILE = "replicated-log"


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _unb64(s: str) -> str:
    return base64.b64decode(s).decode()


def available() -> str | None:
    """None if etcd can run here; else why not."""
    if shutil.which("etcd") is None:
        return "etcd is not installed (Debian: apt-get install etcd-server)"
    return netns_available()


@dataclass(frozen=True)
class EtcdRun:
    """One recorded run's shape."""

    name: str
    members: int = 3
    writers: int = 2          # client threads per member
    messages: int = 20        # puts per writer
    think: float = 0.005      # mean pause between a writer's puts, seconds (exponential)
    faults: tuple[Fault, ...] = ()  # the fault schedule (tomkit/record/faults.py)


#: the faults this recorder can inflict
ACTIONS = ("kill", "pause", "partition", "restart")

#: the standard runs of ``python -m tomkit.record etcd``
RUNS = {"clean": EtcdRun("clean")} | {
    name: EtcdRun(name, faults=faults) for name, faults in SCHEDULES.items()
    if all(f.action in ACTIONS for f in faults)}


class _Member:
    def __init__(self, name: str, client_port: int, peer_port: int, data: Path,
                 net: Network):
        self.name = name
        self.net = net
        self.host = net.address(name)
        self.client_port = client_port
        self.peer_port = peer_port
        self.data = data
        self.proc: subprocess.Popen | None = None
        self.id = ""

    @property
    def client_url(self) -> str:
        return f"http://{self.host}:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://{self.host}:{self.peer_port}"

    def start(self, initial_cluster: str, token: str, log) -> None:
        self.proc = subprocess.Popen(self.net.argv(self.name, [
             "etcd", "--name", self.name, "--data-dir", str(self.data),
             "--listen-peer-urls", self.peer_url,
             "--initial-advertise-peer-urls", self.peer_url,
             "--listen-client-urls", self.client_url,
             "--advertise-client-urls", self.client_url,
             "--initial-cluster", initial_cluster, "--initial-cluster-state", "new",
             "--initial-cluster-token", token,
             # loopback: short heartbeats and elections keep the kill run short
             "--heartbeat-interval", "50", "--election-timeout", "500"]),
            stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent)

    def post(self, path: str, body: dict, timeout: float = 5.0) -> dict:
        req = urllib.request.Request(self.client_url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


class _Watcher(threading.Thread):
    """One member's watch stream, logged as deliveries of ``process``."""

    def __init__(self, member: _Member, log: EventLog, process: str | None = None,
                 connect_for: float = 0.0):
        super().__init__(daemon=True, name=f"watch-{member.name}")
        self.member = member
        self.process = process or member.name
        self.connect_for = connect_for  # seconds to retry connecting (a restarted member)
        self.log = log
        self.last_rev = 0
        self.created = threading.Event()
        self.error: str | None = None
        self._conn: http.client.HTTPConnection | None = None

    def run(self) -> None:
        body = {"create_request": {"key": _b64(PREFIX), "range_end": _b64(PREFIX[:-1] + "0"),
                                   "start_revision": "1"}}
        try:
            end = time.monotonic() + self.connect_for
            while True:
                try:
                    self._conn = http.client.HTTPConnection(
                        self.member.host, self.member.client_port, timeout=120)
                    self._conn.request("POST", "/v3/watch", body=json.dumps(body),
                                       headers={"Content-Type": "application/json"})
                    resp = self._conn.getresponse()
                    break
                except OSError:
                    if time.monotonic() > end:
                        raise
                    time.sleep(0.2)
            while True:
                line = resp.readline()
                if not line:
                    self.error = "stream closed"
                    return
                result = json.loads(line).get("result", {})
                if result.get("created"):
                    self.created.set()
                for ev in result.get("events", []):
                    if ev.get("type", "PUT") != "PUT":
                        continue
                    rev = int(ev["kv"]["mod_revision"])
                    self.log.add(self.process, "deliver", msg=_unb64(ev["kv"]["key"])
                                 [len(PREFIX):], x_rev=rev)
                    self.last_rev = max(self.last_rev, rev)
        except (OSError, http.client.HTTPException, ValueError) as e:
            self.error = f"{type(e).__name__}: {e}"
        finally:
            self.created.set()

    def stop(self) -> None:
        conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Cluster:
    """The members seen by the fault schedule (:class:`tomkit.record.faults.Cluster`).
    A restarted member recovers from its data folder and rejoins; its new process
    (``e2r1``) watches from revision 1 and does not write."""

    def __init__(self, members: list[_Member], watchers: list[_Watcher],
                 dead: dict[str, threading.Event], log: EventLog):
        self.members = {m.name: m for m in members}
        self.watchers = {w.member.name: w for w in watchers}
        self.stopped = dead  # the member's writers stop
        self.log = log
        self.incarnation = dict.fromkeys(self.members, 0)
        self.dead: set[str] = set()
        self.paused: set[str] = set()
        self.start_args: tuple = ()  # initial cluster, token
        self.files: list = []

    def process(self, server: str) -> str:
        k = self.incarnation[server]
        return server if k == 0 else f"{server}r{k}"

    def leader(self) -> str | None:
        m = _leader([m for n, m in self.members.items() if n not in self.paused])
        return m.name if m is not None else None

    def running(self) -> list[str]:
        return [n for n, m in self.members.items() if n not in self.dead
                and n not in self.paused and n not in m.net.cut
                and m.proc is not None and m.proc.poll() is None]

    def kill(self, server: str) -> None:
        self.members[server].kill()
        self.dead.add(server)
        self.stopped[server].set()
        self.watchers[server].join(5)
        self.log.add(self.process(server), "crash")

    def pause(self, server: str) -> None:
        self.members[server].proc.send_signal(signal.SIGSTOP)
        self.paused.add(server)

    def resume(self, server: str) -> None:
        self.members[server].proc.send_signal(signal.SIGCONT)
        self.paused.discard(server)

    def isolate(self, server: str) -> None:
        self.members[server].net.isolate(server)

    def heal(self, server: str) -> None:
        self.members[server].net.heal(server)

    def restart(self, server: str) -> None:
        m = self.members[server]
        self.incarnation[server] += 1
        out = open(m.data.parent / f"{m.name}.log", "ab")
        self.files.append(out)
        m.start(*self.start_args, out)
        self.dead.discard(server)
        proc = self.process(server)
        self.log.add(proc, "join")
        w = _Watcher(m, self.log, proc, connect_for=60)
        self.watchers[server] = w
        w.start()


class _Writer(threading.Thread):
    """One client thread of a member: puts its keys, one message each."""

    def __init__(self, member: _Member, index: int, run: EtcdRun, log: EventLog,
                 rng: random.Random, progress, dead: threading.Event, deadline: float):
        super().__init__(daemon=True, name=f"write-{member.name}-{index}")
        self.member, self.index, self.run_, self.log = member, index, run, log
        self.rng, self.progress, self.dead, self.deadline = rng, progress, dead, deadline

    def run(self) -> None:
        for k in range(self.run_.messages):
            if self.dead.is_set() or time.monotonic() > self.deadline:
                return
            time.sleep(self.rng.expovariate(1 / self.run_.think))
            msg = f"{self.member.name}.w{self.index}.{k}"
            rec = self.log.add(self.member.name, "send", msg=msg)
            if rec is None:
                return
            rec["x_put"] = self._put(msg)
            self.progress()
            if rec["x_put"].startswith("failed"):
                return

    def _put(self, msg: str) -> str:
        key = _b64(PREFIX + msg)
        txn = {"compare": [{"target": "CREATE", "key": key, "create_revision": "0"}],
               "success": [{"request_put": {"key": key, "value": _b64(msg)}}]}
        last = ""
        # up to 60 s: an 8 s partition and the election after it, on a loaded machine
        until = min(self.deadline, time.monotonic() + 60)
        while time.monotonic() < until:
            if self.dead.is_set():
                return f"failed: member killed ({last})"
            try:
                out = self.member.post("/v3/kv/txn", txn, timeout=3)
                return "ok" if out.get("succeeded") else "exists"
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code} {e.read()[:200].decode(errors='replace')}"
            except (OSError, http.client.HTTPException) as e:
                last = f"{type(e).__name__}: {e}"
            time.sleep(0.05)
        return f"failed: deadline ({last})"


def _leader(members: list[_Member]) -> _Member | None:
    for m in members:
        if m.proc is None or m.proc.poll() is not None:
            continue
        try:
            lead = m.post("/v3/maintenance/status", {}, timeout=2)["leader"]
        except (OSError, KeyError, ValueError):
            continue
        for c in members:
            if c.id == lead:
                return c
    return None


def record(run: EtcdRun, out: str | Path, *, seed: int = 1, timeout: float = 60.0,
           workdir: str | Path | None = None, say=print) -> EventLog:
    """Record one run into ``out`` (a trace file); the log, for the caller's summary."""
    why = available()
    if why:
        raise RuntimeError(why)
    net = Network([f"e{i + 1}" for i in range(run.members)])
    try:
        net.up()
        with net.clients():  # the clients, and every thread of the run, in the hub
            return _record(run, out, net, seed, timeout, workdir, say)
    finally:
        net.down()


def _record(run: EtcdRun, out: str | Path, net: Network, seed: int, timeout: float,
            workdir: str | Path | None, say) -> EventLog:
    rng = random.Random(seed)
    deadline = time.monotonic() + timeout
    trace = f"etcd-{run.name}-s{seed}"
    log = EventLog(trace)
    tmp = Path(tempfile.mkdtemp(prefix="tomkit-etcd-", dir=workdir))
    # a namespace each: etcd's own default ports (client 2379, peer 2380) serve all
    members = [_Member(f"e{i + 1}", 2379, 2380, tmp / f"e{i + 1}", net)
               for i in range(run.members)]
    initial = ",".join(f"{m.name}={m.peer_url}" for m in members)
    logs = [open(tmp / f"{m.name}.log", "wb") for m in members]
    watchers: list[_Watcher] = []
    cluster: _Cluster | None = None
    stop = threading.Event()
    try:
        token = f"tomkit-{os.getpid()}-{seed}"
        for m, f in zip(members, logs):
            m.start(initial, token, f)
        listing = _wait_ready(members, deadline)
        ids = {x["name"]: x["ID"] for x in listing["members"]}
        for m in members:
            m.id = ids[m.name]
        view = f"cluster-{listing['header']['cluster_id']}"
        names = sorted(ids)
        for m in members:
            log.add(m.name, "view", view=view, members=names)
        watchers = [_Watcher(m, log) for m in members]
        for w in watchers:
            w.start()
        for w in watchers:
            w.created.wait(10)
        total = run.members * run.writers * run.messages
        sent = [0]
        lock = threading.Lock()
        half = threading.Event()

        def progress() -> None:
            with lock:
                sent[0] += 1
                if sent[0] >= total // 2:
                    half.set()

        dead = {m.name: threading.Event() for m in members}
        writers = [_Writer(m, i, run, log, random.Random(rng.random()), progress,
                           dead[m.name], deadline)
                   for m in members for i in range(run.writers)]
        for w in writers:
            w.start()
        cluster = _Cluster(members, watchers, dead, log)
        cluster.start_args = (initial, token)
        faults = None
        if run.faults:
            faults = FaultRunner(run.faults, cluster, log, progress=lambda: sent[0] / total,
                                 deadline=deadline, say=say, stop=stop)
            faults.start()
        for w in writers:
            w.join(max(0.0, deadline - time.monotonic()))
        if faults is not None:
            faults.done.wait(max(0.0, deadline - time.monotonic()))
            if faults.error is not None:
                raise RuntimeError(f"etcd: fault schedule: {faults.error}")
        _drain(members, cluster.watchers, cluster.dead, deadline, say)
    finally:
        log.freeze()
        stop.set()
        for w in [*watchers, *(cluster.watchers.values() if cluster else ())]:
            w.stop()
        for m in members:
            m.kill()
        for f in [*logs, *(cluster.files if cluster else ())]:
            f.close()
        if not os.environ.get("TOMKIT_KEEP_RECORD"):
            shutil.rmtree(tmp, ignore_errors=True)
    log.write(out)
    return log


def _wait_ready(members: list[_Member], deadline: float) -> dict:
    last = ""
    while time.monotonic() < deadline:
        for m in members:
            if m.proc is not None and m.proc.poll() is not None:
                raise RuntimeError(f"etcd {m.name} exited with {m.proc.returncode} at start "
                                   f"(log in {m.data.parent / (m.name + '.log')})")
        try:
            listing = members[0].post("/v3/cluster/member/list", {}, timeout=2)
            if all(m.post("/v3/maintenance/status", {}, timeout=2).get("leader", "0") != "0"
                   for m in members):
                return listing
        except (OSError, ValueError, KeyError) as e:
            last = str(e)
        time.sleep(0.1)
    raise RuntimeError(f"etcd cluster not ready before the deadline ({last})")


def _drain(members, watchers: dict, dead: set, deadline, say) -> None:
    """Wait until every running member's watcher has seen the last revision."""
    alive = [(m, watchers[m.name]) for m in members if m.name not in dead]
    final = None
    while time.monotonic() < deadline and final is None:
        for m, _ in alive:
            try:
                final = int(m.post("/v3/kv/range", {"key": _b64(PREFIX)},
                                   timeout=2)["header"]["revision"])
                break
            except (OSError, ValueError, KeyError):
                continue
        else:
            time.sleep(0.1)
    if final is None:
        say("  warning: could not read the last revision; the trace may not be drained")
        return
    while time.monotonic() < deadline:
        if all(w.last_rev >= final for _, w in alive):
            return
        time.sleep(0.05)
    lag = {m.name: w.last_rev for m, w in alive if w.last_rev < final}
    say(f"  warning: not drained by the deadline (last revision {final}, watchers at {lag})")


#: what this recorder provides (tomkit/record/system.py)
SYSTEM = System("etcd", RUNS, ACTIONS, record, available, profile=PROFILE)
