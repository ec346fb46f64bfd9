"""Record ZooKeeper (ZAB; Debian's zookeeper, 3.8) as a delivery trace: each server's
committed transactions, in zxid order, are its deliveries.

An ensemble of three servers ``z1``-``z3`` (``QuorumPeerMain``, one JVM each, 128 MB
heap), each in a network namespace of its own (:mod:`tomkit.record.netns`: address
10.215.0.<i>, the recorder's sessions in the hub namespace), with free ports (client,
quorum, election), data in a temporary folder, tick 500 ms. Each server is one process
of the trace.

*Sends.* One writer session per server (kazoo, connected to that server only) creates
the znodes ``/tomkit/<msg>``, one message each, ``send`` logged just before the
request, one request outstanding (``window``): ZooKeeper promises that a session's
updates are applied in the order they were sent, which fifo-order judges. A request
that fails on a lost connection (or gets no answer) is sent again, with the same path,
once the session is back; a create that finds its znode already there was committed by
the earlier attempt (``x_put: exists``), so no message is created twice. With one
request outstanding, a retry keeps the session's order. An expired session ends its
writer.

*Deliveries.* One reader session per server, connected to that server only, watches
the children of ``/tomkit`` and reads the ``czxid`` of each new child; a server applies
transactions in zxid order, so every read shows a prefix of its applied log, and the
children new since the last read, sorted by ``czxid``, are that server's next
deliveries (``x_zxid``; the recorder checks that they extend the prefix). A server's
reads are served from its own state (no ``sync``), which is what ZooKeeper's "Single
System Image" and "Timeliness" speak of.

*Views.* A ``view`` before a server's first delivery of each leader epoch (the high 32
bits of the zxid, ZAB's epoch): ``epoch-<e>``, members the configured servers (ZooKeeper
tells clients nothing of which followers are in the leader's quorum).

*Faults* (:mod:`tomkit.record.faults`): the leader is the server whose ``srvr`` says
``Mode: leader``; kill, pause and restart act on the server's JVM; a partition cuts the
server's namespace off from the other servers' (its own sessions still reach it). A restarted server
reloads its snapshot and log and syncs with the leader, so its new process (``z2r1``)
reads a prefix of the log from the start: its deliveries repeat the old ones.

What ZooKeeper documents (ZooKeeper Programmer's Guide, "ZooKeeper guarantees"):
sequential consistency (a client's updates applied in the order sent), atomicity,
single system image, reliability; Junqueira, Reed and Serafini, "Zab: High-performance
broadcast for primary-backup systems" (DSN 2011), section III: total order, agreement
(prefix), local and global primary order. The profile is ``zookeeper.toml`` beside
this module.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tomkit.record.child import until
from tomkit.record.cluster import Members, log_send
from tomkit.record.faults import SCHEDULES, Fault, FaultRunner
from tomkit.record.log import EventLog, free_ports
from tomkit.record.netns import Network
from tomkit.record.netns import available as netns_available
from tomkit.record.server import Server
from tomkit.record.system import System

__all__ = ["SYSTEM", "RUNS", "ZkRun", "record", "available", "profile_file"]

HERE = Path(__file__).parent
JAR = Path("/usr/share/java/zookeeper.jar")
#: a binding for ZooKeeper's slf4j logging, so that each server's log file says what it did
SLF4J = Path("/usr/share/java/slf4j-simple.jar")
ROOT = "/tomkit"
TICK_MS = 500
#: seconds a session lives without its server (the recorder's sessions ask for this much)
SESSION_TIMEOUT = 30.0
#: kazoo logs every dropped connection; the recorder reports what matters itself
_QUIET = logging.getLogger("tomkit.record.zookeeper.kazoo")
_QUIET.setLevel(logging.CRITICAL)
_QUIET.propagate = False


def profile_file(run: ZkRun | None = None) -> Path:
    """The guarantee file of what ZooKeeper documents."""
    return HERE / "zookeeper.toml"


def available() -> str | None:
    """None if ZooKeeper can run here; else why not."""
    if shutil.which("java") is None:
        return "java is not installed (Debian: apt-get install openjdk-17-jre-headless)"
    if not JAR.exists():
        return f"{JAR} is missing (Debian: apt-get install zookeeper)"
    try:
        import kazoo  # noqa: F401
    except ImportError:
        return "the kazoo client is not installed (pip install kazoo)"
    return netns_available()


@dataclass(frozen=True)
class ZkRun:
    """One recorded run's shape."""

    name: str
    servers: int = 3
    messages: int = 40        # per writer session (one per server)
    # requests a writer has outstanding; more than one is not FIFO-safe with kazoo, which
    # fails the requests in flight when a connection breaks but sends those still queued
    # after it reconnects, ahead of the application's resends (docs/case-studies.md)
    window: int = 1
    think: float = 0.01       # mean pause between a writer's sends, seconds
    faults: tuple[Fault, ...] = ()
    period: float | None = None  # repeat the faults every period seconds (long runs)
    send_for: float | None = None  # writers stop after this many seconds (long runs)


#: the faults this recorder can inflict
ACTIONS = ("kill", "pause", "partition", "restart")


RUNS = {"clean": ZkRun("clean")} | {
    name: ZkRun(name, faults=faults) for name, faults in SCHEDULES.items()}


def _four_letters(host: str, port: int, cmd: str = "srvr", timeout: float = 2.0) -> str:
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(cmd.encode())
        chunks = []
        while True:
            b = s.recv(4096)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks).decode(errors="replace")


class _Zk:
    """One ZooKeeper server: its ports, data folder and JVM."""

    def __init__(self, sid: int, ports: tuple[int, int, int], tmp: Path, net: Network):
        self.sid = sid
        self.name = f"z{sid}"
        self.net = net
        self.host = net.address(self.name)
        self.client_port, self.quorum_port, self.election_port = ports
        self.data = tmp / self.name
        self.data.mkdir()
        (self.data / "myid").write_text(f"{sid}\n")
        self.cfg = tmp / f"{self.name}.cfg"
        self.server: Server | None = None

    def configure(self, everyone: list[_Zk]) -> None:
        lines = [f"tickTime={TICK_MS}", "initLimit=20", "syncLimit=10",
                 f"dataDir={self.data}", f"clientPort={self.client_port}",
                 f"clientPortAddress={self.host}", "4lw.commands.whitelist=srvr,stat,ruok",
                 "admin.enableServer=false", "autopurge.purgeInterval=0",
                 "maxClientCnxns=0", "standaloneEnabled=false",
                 # a session outlives an 8 s partition of its server and the election
                 # after it (the default bound is 20 ticks, 10 s)
                 f"maxSessionTimeout={SESSION_TIMEOUT * 1000:.0f}"]
        lines += [f"server.{z.sid}={z.host}:{z.quorum_port}:{z.election_port}"
                  for z in everyone]
        self.cfg.write_text("\n".join(lines) + "\n")
        self.server = Server(
            self.name,
            self.net.argv(self.name, [
                "java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.admin.enableServer=false", "-Djava.net.preferIPv4Stack=true",
                "-cp", f"{JAR}:{SLF4J}",
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(self.cfg)]),
            self.cfg.parent / f"{self.name}.log")

    def srvr(self, field: str) -> str | None:
        """A field of the server's ``srvr`` answer (Mode, Zxid, ...), None if it does
        not answer."""
        try:
            for line in _four_letters(self.host, self.client_port).splitlines():
                if line.startswith(field + ":"):
                    return line.split(":", 1)[1].strip()
        except OSError:
            return None
        return None

    def mode(self) -> str | None:
        return self.srvr("Mode")


class _Reader(threading.Thread):
    """One server's committed creates under /tomkit, read through a session attached to
    that server only, logged as deliveries of ``process``."""

    def __init__(self, zk: _Zk, process: str, log: EventLog, members: list[str],
                 error: list[str]):
        super().__init__(daemon=True, name=f"read-{process}")
        self.zk, self.process, self.log, self.members = zk, process, log, members
        self.errors = error
        self.delivered_msgs: set[str] = set()
        self.last_zxid = 0
        self.epoch: int | None = None
        self.changed = threading.Event()
        self.stopped = threading.Event()
        self.ready = threading.Event()
        self.idle = threading.Event()  # logs nothing more
        self.client = None

    def run(self) -> None:
        from kazoo.client import KazooClient
        from kazoo.exceptions import KazooException, NoNodeError

        client = KazooClient(hosts=f"{self.zk.host}:{self.zk.client_port}", timeout=SESSION_TIMEOUT,
                             logger=_QUIET,
                             connection_retry={"max_tries": -1, "max_delay": 0.5})
        self.client = client
        try:
            client.start(timeout=60)
            client.ensure_path(ROOT)
            client.ChildrenWatch(ROOT, lambda children: self.changed.set())
            self.ready.set()
            while not self.stopped.is_set():
                # the watch, and every second anyway: in a 10-minute run the children
                # watches of two sessions stopped firing after a leader was killed
                self.changed.wait(1.0)
                if self.stopped.is_set():
                    break
                self.changed.clear()
                try:
                    self._read(client)
                except (KazooException, NoNodeError):
                    self.changed.set()  # read again once the session is back
                    time.sleep(0.1)
        except Exception as e:  # the server was killed, or the session expired
            if not self.stopped.is_set():
                self.errors.append(f"{self.process} reader: {type(e).__name__}: {e}")
        finally:
            self.ready.set()
            self.idle.set()
            try:
                client.stop()
                client.close()
            except Exception:
                pass

    def _read(self, client) -> None:
        children = set(client.get_children(ROOT)) - self.delivered_msgs
        if not children:
            return
        stats = {c: client.exists_async(f"{ROOT}/{c}") for c in children}
        fresh = []
        for c, a in stats.items():
            st = a.get(timeout=30)
            if st is not None:
                fresh.append((st.czxid, c))
        fresh.sort()
        for zxid, msg in fresh:
            if zxid <= self.last_zxid:
                raise RuntimeError(f"{self.process}: {msg} (zxid {zxid:#x}) appears after "
                                   f"zxid {self.last_zxid:#x}: not a prefix of the log")
            epoch = zxid >> 32
            if epoch != self.epoch:
                self.epoch = epoch
                self.log.add(self.process, "view", view=f"epoch-{epoch}",
                             members=self.members)
            self.log.add(self.process, "deliver", msg=msg, x_zxid=f"{zxid:#x}")
            self.last_zxid = zxid
            self.delivered_msgs.add(msg)

    def stop(self) -> None:
        self.stopped.set()
        self.changed.set()


class _Writer(threading.Thread):
    """One writer session attached to one server: its creates, pipelined."""

    def __init__(self, zk: _Zk, process: str, run: ZkRun, log: EventLog, rng: random.Random,
                 count, deadline: float, retry_until: float, start_at: int = 0):
        super().__init__(daemon=True, name=f"write-{process}")
        self.zk, self.process, self.run_, self.log = zk, process, run, log
        self.rng, self.count, self.deadline, self.start_at = rng, count, deadline, start_at
        self.retry_until = retry_until  # a message sent is retried until then
        self.sent_msgs: set[str] = set()
        self.stopped = threading.Event()
        self.outcome = ""

    def run(self) -> None:
        from kazoo.client import KazooClient, KazooState

        client = KazooClient(hosts=f"{self.zk.host}:{self.zk.client_port}", timeout=SESSION_TIMEOUT,
                             logger=_QUIET,
                             connection_retry={"max_tries": -1, "max_delay": 0.5})
        lost = threading.Event()
        client.add_listener(lambda state: lost.set() if state == KazooState.LOST else None)
        try:
            client.start(timeout=60)
            self._send_all(client, lost)
        except Exception as e:
            self.outcome = f"{type(e).__name__}: {e}"
        finally:
            try:
                client.stop()
                client.close()
            except Exception:
                pass

    def _send_all(self, client, lost: threading.Event) -> None:
        from kazoo.exceptions import ConnectionLoss, NodeExistsError
        from kazoo.handlers.threading import KazooTimeoutError

        broken = (ConnectionLoss, KazooTimeoutError)  # no answer: perhaps committed
        pending: list[tuple[dict, str, object]] = []  # (send record, path, async result)

        def fail(why: str) -> bool:
            for r, _, _ in pending:
                r.setdefault("x_put", f"failed: {why}")
            pending.clear()
            return False

        def settle(keep: int) -> bool:
            """Wait for all but ``keep`` outstanding requests; False when the writer
            must stop."""
            while len(pending) > keep:
                rec, path, res = pending[0]
                try:
                    res.get(timeout=30)
                    rec["x_put"] = "ok"
                except NodeExistsError:
                    rec["x_put"] = "exists"
                except broken:
                    if not resend():
                        return False
                    continue
                except Exception as e:
                    return fail(type(e).__name__)
                pending.pop(0)
            return not self._over()

        def resend() -> bool:
            """The connection broke and every outstanding request failed, some perhaps
            committed: once the session is back, send them again, in order, one at a
            time (the same session, so its order holds)."""
            while pending:
                rec, path, _ = pending[0]
                if lost.is_set():
                    return fail("session expired")
                if self.stopped.is_set():
                    return fail("server killed")
                if time.monotonic() > self.retry_until:
                    return fail("deadline")
                try:
                    # bounded: kazoo holds a request while it has no connection
                    client.create_async(path, b"").get(timeout=5)
                    rec["x_put"] = "ok"
                except NodeExistsError:
                    rec["x_put"] = "exists"
                except broken:
                    time.sleep(0.2)
                    continue
                except Exception as e:
                    return fail(type(e).__name__)
                rec["x_retried"] = True
                pending.pop(0)
            return True

        for k in range(self.start_at, self.start_at + self.run_.messages):
            if self._over():
                break
            time.sleep(self.rng.expovariate(1 / self.run_.think))
            opened = log_send(self.log, self.process, k, self.sent_msgs, self.count)
            if opened is None:
                break
            msg, rec = opened
            path = f"{ROOT}/{msg}"
            pending.append((rec, path, client.create_async(path, b"")))
            if not settle(self.run_.window - 1):
                break
        settle(0)
        self.outcome = self.outcome or "done"

    def _over(self) -> bool:
        return self.stopped.is_set() or time.monotonic() > self.deadline


class _Ensemble(Members):
    """The ensemble seen by the fault schedule (:class:`tomkit.record.faults.Cluster`)."""

    def __init__(self, zks: list[_Zk], run: ZkRun, log: EventLog, rng: random.Random,
                 deadline: float, tmp: Path, say):
        super().__init__({z.name: z for z in zks}, run, deadline)
        self.zks: dict[str, _Zk] = self.hosts
        self.log, self.rng, self.tmp, self.say = log, rng, tmp, say
        self.readers: dict[str, _Reader] = {}
        self.writers: dict[str, _Writer] = {}
        self.old: list[_Reader] = []
        self.errors: list[str] = []
        self.faults: FaultRunner | None = None

    def attach(self, server: str, send: bool = True) -> None:
        """Start the server's reader (and writer) for its current incarnation."""
        proc = self.process(server)
        zk = self.zks[server]
        reader = _Reader(zk, proc, self.log, self.members, self.errors)
        self.readers[server] = reader
        if send:
            # the view the writer sends in: the epoch the server is in now
            zxid = zk.srvr("Zxid")
            if zxid is None:
                raise RuntimeError(f"zookeeper: {server} does not answer srvr")
            reader.epoch = int(zxid, 16) >> 32
            self.log.add(proc, "view", view=f"epoch-{reader.epoch}", members=self.members)
        reader.start()
        if send:
            w = _Writer(zk, proc, self.run, self.log, random.Random(self.rng.random()),
                        self.count, self.send_until, self.retry_until)
            self.writers[server] = w

    # -- the Cluster protocol
    def leader(self) -> str | None:
        for name, z in self.zks.items():
            if name not in self.dead and z.server is not None and z.server.alive() \
                    and not z.server.paused and z.mode() == "leader":
                return name
        return None

    def kill(self, server: str) -> None:
        z = self.zks[server]
        assert z.server is not None
        z.server.kill()
        self.dead.add(server)
        w, r = self.writers.get(server), self.readers[server]
        if w is not None:
            w.stopped.set()
        r.stop()
        r.idle.wait(15)
        self.log.add(self.process(server), "crash")

    def restart(self, server: str) -> None:
        self.old.append(self.readers[server])
        self.incarnation[server] += 1
        self.dead.discard(server)
        self.zks[server].server.start()
        self.log.add(self.process(server), "join")
        threading.Thread(target=self._rejoin, args=(server,), daemon=True,
                         name=f"rejoin-{server}").start()

    def _rejoin(self, server: str) -> None:
        """Once the restarted server answers, its new process reads and writes."""
        zk = self.zks[server]
        end = min(self.deadline, time.monotonic() + 60)
        while time.monotonic() < end and zk.mode() not in ("leader", "follower"):
            time.sleep(0.2)
        if server in self.dead or zk.mode() not in ("leader", "follower"):
            self.errors.append(f"{self.process(server)} did not rejoin the ensemble")
            return
        self.attach(server)
        self.writers[server].start()



def record(run: ZkRun, out: str | Path, *, seed: int = 1, timeout: float = 60.0,
           workdir: str | Path | None = None, say=print) -> EventLog:
    """Record one run into ``out``; the log, for the caller's summary. ``seed`` seeds the
    writers' pauses and names the run (ZooKeeper's schedule is not seeded)."""
    why = available()
    if why:
        raise RuntimeError(why)
    rng = random.Random(seed)
    deadline = time.monotonic() + timeout
    log = EventLog(f"zookeeper-{run.name}-s{seed}")
    tmp = Path(tempfile.mkdtemp(prefix="tomkit-zookeeper-", dir=workdir))
    ports = free_ports(3 * run.servers)
    net = Network([f"z{i + 1}" for i in range(run.servers)])
    zks = [_Zk(i + 1, tuple(ports[3 * i:3 * i + 3]), tmp, net) for i in range(run.servers)]
    ens = _Ensemble(zks, run, log, rng, deadline, tmp, say)
    try:
        net.up()
        with net.clients():  # the sessions, and every thread of the run, in the hub
            _run(run, zks, ens, log, deadline, tmp, say)
    finally:
        log.freeze()
        if ens.faults is not None:
            ens.faults.stop_event.set()
        for r in [*ens.readers.values(), *ens.old]:
            r.stop()
        for w in ens.writers.values():
            w.stopped.set()
        for z in zks:
            if z.server is not None:
                z.server.stop()
        for r in [*ens.readers.values(), *ens.old]:
            r.join(5)
        net.down()
        if not os.environ.get("TOMKIT_KEEP_RECORD"):
            shutil.rmtree(tmp, ignore_errors=True)
    for e in ens.errors:
        say(f"  warning: {e}")
    log.write(out)
    return log


def _run(run: ZkRun, zks: list[_Zk], ens: _Ensemble, log: EventLog, deadline: float,
         tmp: Path, say) -> None:
    """Start the ensemble, its sessions and the fault schedule; wait for the end."""
    for z in zks:
        z.configure(zks)
        z.server.start()
    _wait_ready(zks, deadline, tmp)
    for z in zks:
        ens.attach(z.name)
    for r in ens.readers.values():
        until(r.ready.is_set, deadline, f"zookeeper: {r.process}'s reader did not "
              "connect", tmp)
    if ens.errors:
        raise RuntimeError(f"zookeeper: {ens.errors[0]}")
    for w in ens.writers.values():
        w.start()
    if run.faults:
        faults = ens.faults = FaultRunner(run.faults, ens, log, progress=ens.progress,
                                          deadline=deadline, say=say, period=run.period)
        faults.start()
        if run.period is not None:  # the repeating schedule ends with the sending
            faults.halt.wait(max(0.0, ens.send_until - time.monotonic()))
            faults.halt.set()
        faults.done.wait(max(0.0, deadline - time.monotonic()))
        if faults.error is not None:
            raise RuntimeError(f"zookeeper: fault schedule: {faults.error}")
    for w in list(ens.writers.values()):
        w.join(max(0.0, deadline - time.monotonic()))
    _drain(ens, deadline, say)


def _wait_ready(zks: list[_Zk], deadline: float, tmp: Path) -> None:
    """Until one server leads and the others follow it."""
    def ready() -> bool:
        for z in zks:
            gone = z.server.exited()
            if gone:
                raise RuntimeError(f"zookeeper: {gone}")
        modes = [z.mode() for z in zks]
        return modes.count("leader") == 1 and modes.count("follower") == len(zks) - 1

    until(ready, deadline, "zookeeper: the ensemble did not elect a leader", tmp)


def _drain(ens: _Ensemble, deadline: float, say) -> None:
    """Until every running server delivered every message that any server delivered or
    any running server's writer had acknowledged, and deliveries settled."""
    alive = [ens.readers[s] for s in ens.members if s not in ens.dead]
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        acked = {r["msg"] for r in ens.log.records if r["kind"] == "send"
                 and r.get("x_put") in ("ok", "exists")}
        known = set().union(acked, *(r.delivered_msgs for r in ens.readers.values()))
        now = tuple(len(r.delivered_msgs) for r in alive)
        if now != last or not all(known <= r.delivered_msgs for r in alive):
            last, since = now, time.monotonic()
        elif time.monotonic() - since > 1.0:
            return
        time.sleep(0.1)
    say("  warning: not drained by the deadline: a running server misses a committed "
        "message, or deliveries were still changing")


#: what this recorder provides (tomkit/record/system.py)
SYSTEM = System("zookeeper", RUNS, ACTIONS, record, available,
                profile_file=profile_file, long_runs=True)
