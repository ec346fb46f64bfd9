"""Record NATS JetStream (Debian's nats-server, 2.9) as a delivery trace: a stream
replicated on three servers, each replica's stored order as that server's deliveries.

Three servers ``n1``-``n3`` run each in a network namespace of its own
(:mod:`tomkit.record.netns`: address 10.215.0.<i>, the recorder's clients in the hub
namespace) on NATS's default ports (clients 4222, cluster routes 6222), JetStream on,
file storage in a temporary folder. The recorder creates the stream ``TOMKIT``
(subjects ``tomkit.>``, three replicas, file storage, direct get allowed).

*Sends.* One publisher per server (nats-py, connected to that server only) publishes
its messages one at a time, each with its id as ``Nats-Msg-Id``, and waits for the
stream's acknowledgement (``x_ack``: the stream sequence; ``x_put: ok``). A publish
that fails or times out is sent again with the same id, so JetStream's de-duplication
window keeps a retried message from being stored twice (``x_put: duplicate`` when the
acknowledgement says so); ``failed: ...`` when the deadline or the server's death came
first.

*Deliveries.* Each replica's stored messages, read from the server's file store
(:mod:`tomkit.record.nats.store`) in sequence order (``x_seq``): a killed server's store
right after the kill, the others' after the run, once the stream reports every replica
current and the servers were stopped. (Direct get cannot read one replica: a direct get
through a server is answered by any replica, measured here with one replica paused.)
The deliveries of a replica are therefore logged together, after its sends.

*Views.* One ``view`` per server, the stream's replica set (``stream-TOMKIT``); NATS
reports no leader terms to clients.

*Faults* (:mod:`tomkit.record.faults`): the leader is the stream's leader
(``$JS.API.STREAM.INFO``); kill, pause and restart act on the nats-server process, a
partition cuts the server's namespace off from the other servers' (its publisher still
reaches it). A
restarted server recovers its replica from its store and its peers; its new process
(``n2r1``) delivers what its store holds at the end.

What JetStream documents: "JetStream Model Deep Dive" (docs.nats.io,
using-nats/developer/develop_jetstream/model_deep_dive): a stream is a Raft-replicated
log, a publish acknowledged once stored by a quorum of replicas, "Message
Deduplication" by ``Nats-Msg-Id`` within the duplicate window; the profile is
``nats.toml`` beside this module. An acknowledged message that no running replica
stores at the end is a lost write; the recorder counts them (and validity, read at the
end, flags one sent through a running server).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tomkit.record.child import until
from tomkit.record.clients import ClientLoop, Publisher
from tomkit.record.faults import SCHEDULES, Fault, FaultRunner
from tomkit.record.log import EventLog
from tomkit.record.nats.store import read_stream, stream_folder
from tomkit.record.netns import Network
from tomkit.record.netns import available as netns_available
from tomkit.record.server import Server
from tomkit.record.system import System

__all__ = ["SYSTEM", "RUNS", "NatsRun", "record", "available", "profile_file", "report_lost"]

HERE = Path(__file__).parent
STREAM = "TOMKIT"


def profile_file(run: NatsRun | None = None) -> Path:
    """The guarantee file of what JetStream documents."""
    return HERE / "nats.toml"


def available() -> str | None:
    """None if NATS can run here; else why not."""
    if shutil.which("nats-server") is None:
        return "nats-server is not installed (Debian: apt-get install nats-server)"
    try:
        import nats  # noqa: F401
    except ImportError:
        return "the nats-py client is not installed (pip install nats-py)"
    return netns_available()


@dataclass(frozen=True)
class NatsRun:
    """One recorded run's shape."""

    name: str
    servers: int = 3
    messages: int = 40        # per publisher (one per server)
    think: float = 0.01       # mean pause between a publisher's messages, seconds
    faults: tuple[Fault, ...] = ()
    period: float | None = None    # repeat the faults every period seconds (long runs)
    send_for: float | None = None  # publishers stop after this many seconds (long runs)


#: the faults this recorder can inflict
ACTIONS = ("kill", "pause", "partition", "restart")


RUNS = {"clean": NatsRun("clean")} | {
    name: NatsRun(name, faults=faults) for name, faults in SCHEDULES.items()}


def _config(name: str, host: str, port: int, route: int, peers: list[str],
            store: Path) -> str:
    urls = ", ".join(f"nats-route://{h}:{route}" for h in peers if h != host)
    return f"""server_name: {name}
listen: {host}:{port}
http: 0
jetstream {{
  store_dir: "{store}"
  max_memory_store: 64MB
  max_file_store: 512MB
}}
cluster {{
  name: tomkit
  listen: {host}:{route}
  routes: [{urls}]
}}
"""


class _Nats:
    """One server: its ports, store and process."""

    def __init__(self, i: int, port: int, route: int, net: Network, tmp: Path):
        self.name = f"n{i}"
        self.net = net
        self.host = net.address(self.name)
        self.port = port
        self.store = tmp / self.name
        conf = tmp / f"{self.name}.conf"
        peers = [net.address(s) for s in net.servers]
        conf.write_text(_config(self.name, self.host, port, route, peers, tmp / self.name))
        self.server = Server(self.name, net.argv(self.name, ["nats-server", "-c", str(conf)]),
                             tmp / f"{self.name}.log")

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"


async def _connect(url: str, deadline: float):
    import nats

    async def quiet(e):  # the recorder reports what matters itself
        pass

    return await nats.connect(url, allow_reconnect=True, max_reconnect_attempts=-1,
                              reconnect_time_wait=0.2, connect_timeout=2,
                              error_cb=quiet, disconnected_cb=None)


async def _close(nc) -> None:
    if nc is not None:
        try:
            await asyncio.wait_for(nc.close(), 5)
        except Exception:
            pass


class _Publisher(Publisher):
    """A server's publisher: JetStream publishes, each acknowledged (a duplicate by its
    Nats-Msg-Id is acknowledged as such) or retried on the same connection."""

    def __init__(self, srv: _Nats, process: str, run: NatsRun, log: EventLog,
                 rng: random.Random, count):
        super().__init__(process, run, log, rng, count)
        self.srv = srv
        self.nc = self.js = None

    def retried(self) -> tuple[type[BaseException], ...]:
        from nats.errors import Error as NatsError

        return (NatsError, asyncio.TimeoutError, OSError)

    async def open(self, deadline: float) -> None:
        self.nc = await _connect(self.srv.url, deadline)
        self.js = self.nc.jetstream()

    async def put(self, k: int, msg: str, rec: dict) -> None:
        ack = await self.js.publish(f"tomkit.{self.process}", msg.encode(), timeout=2,
                                    stream=STREAM, headers={"Nats-Msg-Id": msg})
        rec["x_put"] = "duplicate" if ack.duplicate else "ok"
        rec["x_ack"] = ack.seq

    async def shut(self) -> None:
        await _close(self.nc)


class _Cluster(ClientLoop):
    """The servers seen by the fault schedule (:class:`tomkit.record.faults.Cluster`);
    the clients run as tasks of one asyncio loop in a thread of their own."""

    def __init__(self, servers: list[_Nats], run: NatsRun, log: EventLog,
                 rng: random.Random, deadline: float):
        super().__init__({s.name: s for s in servers}, run, log, rng, deadline,
                         "nats-clients")
        self.servers: dict[str, _Nats] = self.hosts
        self.publishers: dict[str, _Publisher] = {}
        self.problems: list[str] = []

    def attach(self, server: str) -> None:
        proc = self.process(server)
        self.log.add(proc, "view", view=f"stream-{STREAM}", members=self.members)
        self.publishers[server] = _Publisher(self.servers[server], proc, self.run, self.log,
                                             random.Random(self.rng.random()), self.count)

    def deliver_store(self, server: str) -> int:
        """Log the server's stored messages as its process's deliveries; how many."""
        msgs, problems = read_stream(stream_folder(self.servers[server].store, STREAM))
        self.problems += problems
        proc = self.process(server)
        for m in msgs:
            self.log.add(proc, "deliver", msg=m.payload.decode(errors="replace"),
                         x_seq=m.seq)
        return len(msgs)

    def start_publishers(self) -> None:
        for p in self.publishers.values():
            self.spawn(p.run(self.send_until, self.retry_until))

    async def _info(self) -> dict | None:
        for name in self.running():
            try:
                nc = await _connect(self.servers[name].url, self.deadline)
            except Exception:
                continue
            try:
                r = await nc.request(f"$JS.API.STREAM.INFO.{STREAM}", b"", timeout=2)
                return json.loads(r.data)
            except Exception:
                continue
            finally:
                await nc.close()
        return None

    # -- the Cluster protocol
    def leader(self) -> str | None:
        info = self.call(self._info())
        return ((info or {}).get("cluster") or {}).get("leader")

    def kill(self, server: str) -> None:
        self.servers[server].server.kill()
        self.dead.add(server)
        if server in self.publishers:
            self.publishers[server].stopped.set()
        self.deliver_store(server)  # what its replica held when it died
        self.log.add(self.process(server), "crash")

    def restart(self, server: str) -> None:
        self.incarnation[server] += 1
        self.dead.discard(server)
        self.servers[server].server.start()
        self.log.add(self.process(server), "join")
        self.attach(server)  # its new process publishes too (its client retries)
        self.spawn(self.publishers[server].run(self.send_until, self.retry_until))


async def _create_stream(url: str, replicas: int, deadline: float) -> None:
    from nats.js.api import StorageType, StreamConfig

    nc = await _connect(url, deadline)
    try:
        js = nc.jetstream()
        last = None
        while time.monotonic() < deadline:
            try:
                await js.add_stream(StreamConfig(
                    name=STREAM, subjects=["tomkit.>"], num_replicas=replicas,
                    storage=StorageType.FILE, allow_direct=True, duplicate_window=120))
                return
            except Exception as e:  # JetStream not ready yet (no meta leader)
                last = e
                await asyncio.sleep(0.5)
        raise RuntimeError(f"nats: could not create the stream: {last}")
    finally:
        await nc.close()


def record(run: NatsRun, out: str | Path, *, seed: int = 1, timeout: float = 60.0,
           workdir: str | Path | None = None, say=print) -> EventLog:
    """Record one run into ``out``; the log. ``seed`` seeds the publishers' pauses and
    names the run (NATS's schedule is not seeded)."""
    why = available()
    if why:
        raise RuntimeError(why)
    net = Network([f"n{i + 1}" for i in range(run.servers)])
    try:
        net.up()
        with net.clients():  # the clients, and every thread of the run, in the hub
            return _record(run, out, net, seed, timeout, workdir, say)
    finally:
        net.down()


def _record(run: NatsRun, out: str | Path, net: Network, seed: int, timeout: float,
            workdir: str | Path | None, say) -> EventLog:
    rng = random.Random(seed)
    deadline = time.monotonic() + timeout
    log = EventLog(f"nats-{run.name}-s{seed}")
    tmp = Path(tempfile.mkdtemp(prefix="tomkit-nats-", dir=workdir))
    # each server has a namespace of its own: NATS's own default ports serve every one
    servers = [_Nats(i + 1, 4222, 6222, net, tmp) for i in range(run.servers)]
    cluster = _Cluster(servers, run, log, rng, deadline)
    faults: FaultRunner | None = None
    try:
        for s in servers:
            s.server.start()
        cluster.call(_create_stream(servers[0].url, run.servers, deadline),
                     timeout=max(1.0, deadline - time.monotonic()))
        until(lambda: cluster.leader() is not None, deadline,
              "nats: the stream has no leader", tmp)
        for s in servers:
            cluster.attach(s.name)
        cluster.start_publishers()
        if run.faults:
            faults = FaultRunner(run.faults, cluster, log, progress=cluster.progress,
                                 deadline=deadline, say=say, period=run.period)
            faults.start()
        if faults is not None:
            if run.period is not None:  # the repeating schedule ends with the sending
                faults.halt.wait(max(0.0, cluster.send_until - time.monotonic()))
                faults.halt.set()
            faults.done.wait(max(0.0, deadline - time.monotonic()))
            if faults.error is not None:
                raise RuntimeError(f"nats: fault schedule: {faults.error}")
        for p in list(cluster.publishers.values()):
            p.done.wait(max(0.0, deadline - time.monotonic()))
        _drain(cluster, deadline, say)
        for p in cluster.publishers.values():
            p.stopped.set()
        cluster.close()
        running = [s for s in servers if s.name not in cluster.dead]
        for s in running:  # a graceful stop writes out what the server buffered
            s.server.stop(grace=10)
        for s in running:
            cluster.deliver_store(s.name)
    finally:
        log.freeze()
        if faults is not None:
            faults.stop_event.set()
        for p in cluster.publishers.values():
            p.stopped.set()
        if cluster.thread.is_alive():
            cluster.close()
        for s in servers:
            s.server.stop()
        if not os.environ.get("TOMKIT_KEEP_RECORD"):
            shutil.rmtree(tmp, ignore_errors=True)
    for p in cluster.problems:
        say(f"  warning: {p}")
    report_lost(log, say)
    log.write(out)
    return log


def _acked(log: EventLog) -> set[str]:
    return {r["msg"] for r in list(log.records) if r["kind"] == "send"
            and r.get("x_put") in ("ok", "duplicate")}


def _drain(cluster: _Cluster, deadline: float, say) -> None:
    """Until the stream has a running leader and reports every running replica current,
    none lagging, and its last sequence has not changed for a second."""
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        info = cluster.call(cluster._info()) or {}
        replicas = (info.get("cluster") or {}).get("replicas") or []
        state = (info.get("state") or {}).get("last_seq")
        running = set(cluster.running())
        leader = (info.get("cluster") or {}).get("leader")
        caught_up = leader in running and all(
            r.get("current") and not r.get("lag") for r in replicas if r["name"] in running)
        if state != last or not caught_up:
            last, since = state, time.monotonic()
        elif time.monotonic() - since > 1.0:
            return
        time.sleep(0.2)
    say("  warning: not drained by the deadline: a replica was not current, or the "
        "stream still grew")


def report_lost(log: EventLog, say) -> None:
    """Say which acknowledged messages no replica stores (lost writes) and which a
    replica running at the end lacks (a store that diverged: docs/case-studies.md)."""
    acked = _acked(log)
    stores: dict[str, set[str]] = {}
    for r in log.records:
        if r["kind"] == "deliver":
            stores.setdefault(r["process"], set()).add(r["msg"])
    lost = sorted(acked - set().union(*stores.values()))
    if lost:
        say(f"  acknowledged but stored by no replica read: {len(lost)} ({', '.join(lost[:5])})")
    crashed = {r["process"] for r in log.records if r["kind"] == "crash"}
    for process, held in sorted(stores.items()):
        lacks = sorted(acked - held - set(lost))
        if process not in crashed and lacks:
            say(f"  acknowledged but missing from {process}'s store: {len(lacks)} "
                f"({', '.join(lacks[:5])})")


#: what this recorder provides (tomkit/record/system.py)
SYSTEM = System("nats", RUNS, ACTIONS, record, available, profile_file=profile_file,
                long_runs=True)
