"""Record RabbitMQ streams (Debian's rabbitmq-server, 3.10) as a delivery trace: a stream
with three replicas, each replica's messages in offset order as that node's deliveries.

Three nodes ``r1``-``r3`` (``r<i>@r<i>``, one Erlang VM each, one scheduler) run each
in a network namespace of its own (:mod:`tomkit.record.netns`: address 10.215.0.<i>,
the recorder's clients in the hub namespace) on RabbitMQ's default ports (AMQP 5672,
stream 5552, distribution 25672), each with an epmd of the recorder's own in its
namespace; the Erlang VMs find each other's host names in an inetrc file of the run
(``ERL_INETRC``: ``r2`` is 10.215.0.2), so nothing on the host (``/etc/hosts``) is
touched. Their data, logs and Erlang cookie are in a temporary folder. They form one
cluster by classic peer discovery, with the stream plugin on. The recorder creates the
stream ``tomkit`` with three replicas (``x-initial-cluster-size``).

*Sends.* One publisher per node (rstream, a named producer, which the stream protocol
sends to the stream's leader) publishes its messages one at a time and waits for each
confirmation (``x_put: ok``, ``x_pid``: the publishing id). A publish that fails or
times out is sent again with the same publishing id: the stream de-duplicates a named
producer's publishing ids, so no message is stored twice.

*Deliveries.* One consumer per node, connected to that node only, reads the stream
from its first offset: the stream plugin serves a consumer from the replica on the
node it is connected to (RabbitMQ's "Streams" guide: consumers can read from replicas),
so the messages in offset order (``x_offset``) are that replica's log.

*Views.* One ``view`` per node, the stream's replica set (``stream-tomkit``).

*Faults* (:mod:`tomkit.record.faults`): the leader is the stream's leader (the stream
protocol's metadata); kill, pause and restart act on the node's Erlang VM; a partition
cuts the node's namespace off from the other nodes' (its clients still reach it), and
the nodes handle it as ``cluster_partition_handling = pause_minority`` says, the
setting RabbitMQ's "Clustering and Network Partitions" guide recommends for three
nodes and more. A restarted
node rejoins the cluster and its replica catches up; its new process (``r2r1``) reads
the stream from the start.

What RabbitMQ documents ("Streams", rabbitmq.com/streams.html, "Data Safety" and
"Replication"; "Reliability Guide", publisher confirms): a stream is a replicated,
append-only log; a message confirmed to the publisher is replicated to a quorum of
replicas; consumers read it in the order written, from any replica; de-duplication by
producer name and publishing id. The profile is ``rabbitmq.toml`` beside this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tomkit.record.child import until
from tomkit.record.clients import ClientLoop, Publisher
from tomkit.record.faults import SCHEDULES, Fault, FaultRunner
from tomkit.record.log import EventLog
from tomkit.record.netns import Network
from tomkit.record.netns import available as netns_available
from tomkit.record.server import Server
from tomkit.record.system import System

__all__ = ["SYSTEM", "Boot", "booted", "RUNS", "RabbitRun", "record", "available",
           "profile_file", "ACTIONS"]

HERE = Path(__file__).parent
#: the stream of a run is named ``tomkit-<run>-s<seed>``: runs on one booted cluster
#: (:func:`booted`) each have their own
STREAM = "tomkit"
USER = PASSWORD = "guest"
#: the faults this recorder can inflict
ACTIONS = ("kill", "pause", "partition", "restart")
#: RabbitMQ's default ports; every node has a namespace, and so its ports, of its own
AMQP_PORT, STREAM_PORT, DIST_PORT, EPMD_PORT = 5672, 5552, 25672, 4369
# rstream logs every lost connection; the recorder reports what matters itself
logging.getLogger("rstream").setLevel(logging.CRITICAL)


def _sbin() -> Path | None:
    """The folder of RabbitMQ's own scripts (Debian's /usr/sbin wrappers switch user)."""
    found = sorted(Path("/usr/lib/rabbitmq/lib").glob("rabbitmq_server-*/sbin"))
    return found[-1] if found else None


def profile_file(run: RabbitRun | None = None) -> Path:
    return HERE / "rabbitmq.toml"


def available() -> str | None:
    """None if RabbitMQ can run here; else why not."""
    if _sbin() is None or shutil.which("epmd") is None:
        return "rabbitmq-server is not installed (Debian: apt-get install rabbitmq-server)"
    try:
        import rstream  # noqa: F401
    except ImportError:
        return "the rstream client is not installed (pip install rstream)"
    return netns_available()


@dataclass(frozen=True)
class RabbitRun:
    """One recorded run's shape."""

    name: str
    nodes: int = 3
    messages: int = 40        # per publisher (one per node)
    think: float = 0.01       # mean pause between a publisher's messages, seconds
    faults: tuple[Fault, ...] = ()
    period: float | None = None    # repeat the faults every period seconds (long runs)
    send_for: float | None = None  # publishers stop after this many seconds (long runs)


RUNS = {"clean": RabbitRun("clean")} | {
    name: RabbitRun(name, faults=faults) for name, faults in SCHEDULES.items()}


class _Node:
    """One RabbitMQ node: its ports, folders and Erlang VM."""

    def __init__(self, i: int, net: Network, tmp: Path):
        self.name = f"r{i}"
        self.node = f"r{i}@r{i}"
        self.net = net
        self.host = net.address(self.name)
        self.stream_port = STREAM_PORT
        base = tmp / self.name
        base.mkdir()
        (base / "enabled_plugins").write_text("[rabbitmq_stream].\n")
        peers = "\n".join(f"cluster_formation.classic_config.nodes.{k} = {s}@{s}"
                          for k, s in enumerate(net.servers, 1))
        (base / "rabbitmq.conf").write_text(f"""listeners.tcp.default = {self.host}:{AMQP_PORT}
stream.listeners.tcp.1 = {self.host}:{STREAM_PORT}
stream.advertised_host = {self.host}
stream.advertised_port = {STREAM_PORT}
distribution.listener.interface = {self.host}
distribution.listener.port_range.min = {DIST_PORT}
distribution.listener.port_range.max = {DIST_PORT}
cluster_partition_handling = pause_minority
loopback_users = none
vm_memory_high_watermark.absolute = 256MB
disk_free_limit.absolute = 50MB
cluster_formation.peer_discovery_backend = classic_config
{peers}
""")
        self.env = _erl_env(tmp) | {
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_CONFIG_FILE": str(base / "rabbitmq.conf"),
            "RABBITMQ_MNESIA_BASE": str(base / "mnesia"),
            "RABBITMQ_LOG_BASE": str(base / "log"),
            "RABBITMQ_LOGS": "-",
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(base / "pid"),
            # the script execs the VM (no shell in between): the recorder's signals
            # reach the VM, and the VM dies with the recorder (PR_SET_PDEATHSIG)
            "RABBITMQ_ALLOW_INPUT": "1",
            "RABBITMQ_SERVER_ERL_ARGS": "+S 1:1 +A 4 +sbwt none",
        }
        self.server = Server(self.name, net.argv(self.name, [str(_sbin() / "rabbitmq-server")]),
                             tmp / f"{self.name}.log", env=self.env, hold_stdin=True)
        # the node's own epmd, on its address (where the others look it up) and loopback
        self.epmd = Server(f"{self.name}-epmd", net.argv(self.name, [
            "epmd", "-address", self.host, "-port", str(EPMD_PORT)]),
            tmp / f"{self.name}-epmd.log")

    def epmd_up(self) -> bool:
        """Whether the node's epmd answers (``epmd -names`` in its namespace)."""
        r = subprocess.run(self.net.argv(self.name, ["epmd", "-port", str(EPMD_PORT),
                                                     "-names"]),
                           capture_output=True, timeout=30)
        return r.returncode == 0

    def ctl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """``rabbitmqctl`` on this node, run in its namespace (a CLI node registers with
        the namespace's epmd)."""
        return subprocess.run(self.net.argv(self.name, [
            str(_sbin() / "rabbitmqctl"), "-n", self.node, *args]), env=self.env,
            capture_output=True, text=True, timeout=timeout)


def _erl_env(tmp: Path) -> dict:
    # ERL_INETRC: the nodes' host names, for every Erlang VM of the run (_inetrc)
    return dict(os.environ, HOME=str(tmp), ERL_EPMD_PORT=str(EPMD_PORT),
                ERL_INETRC=str(tmp / "inetrc"))


def _inetrc(net: Network) -> str:
    """Erlang's resolver file: each node's host name (``r2``) is its address."""
    hosts = "".join(f"{{host, {{{net.address(s).replace('.', ',')}}}, [\"{s}\"]}}.\n"
                    for s in net.servers)
    return hosts + "{lookup, [file, native]}.\n"


def _consumer_on(host: str, port: int):
    """An rstream consumer that reads from the node at ``host:port`` (rstream picks a
    replica at random; the recorder needs each node's own)."""
    from rstream import Consumer
    from rstream.client import Addr

    class NodeConsumer(Consumer):
        async def _get_or_create_client(self, stream: str):
            if stream not in self._clients:
                self._clients[stream] = await self._pool.get(
                    addr=Addr(host, port), connection_closed_handler=self._on_connection_closed,
                    connection_name=self._connection_name, stream=stream,
                    max_clients_by_connections=self._max_subscribers_by_connection,
                    locator_request=False)
            return self._clients[stream]

    return NodeConsumer(host, port, username=USER, password=PASSWORD)


class _Reader:
    """One node's replica, read from its first offset by a consumer on that node."""

    def __init__(self, node: _Node, process: str, log: EventLog, stream: str,
                 behind=lambda r: False):
        self.node, self.process, self.log, self.stream = node, process, log, stream
        self.behind = behind  # behind(reader): another running replica's reader is ahead
        self.resubscribed = 0
        self.fresh = False  # subscribed again, nothing delivered since
        self.delivered_msgs: set[str] = set()
        self.next_offset = 0
        self.stopped = threading.Event()
        self.ready = threading.Event()
        self.idle = threading.Event()
        self.error: str | None = None

    async def run(self, deadline: float) -> None:
        from rstream import ConsumerOffsetSpecification, OffsetType

        consumer = None

        async def on_message(msg, ctx) -> None:
            if self.stopped.is_set():
                return
            if ctx.offset < self.next_offset:  # a redelivery after a resubscription
                return
            if ctx.offset != self.next_offset and self.error is None:
                self.error = (f"{self.process}: offset {ctx.offset} follows "
                              f"{self.next_offset - 1}")
            body = bytes(msg.body if hasattr(msg, "body") else msg).decode(errors="replace")
            # the first delivery after a new subscription says so: a reader that had
            # stopped, not a replica that had lost the message (docs/case-studies.md)
            note = {"x_resubscribed": self.resubscribed} if self.fresh else {}
            self.fresh = False
            self.log.add(self.process, "deliver", msg=body, x_offset=ctx.offset, **note)
            self.delivered_msgs.add(body)
            self.next_offset = ctx.offset + 1

        async def subscribe():
            nonlocal consumer
            while not self.stopped.is_set() and time.monotonic() < deadline:
                try:
                    consumer = _consumer_on(self.node.host, self.node.stream_port)
                    await asyncio.wait_for(consumer.start(), 20)
                    await asyncio.wait_for(consumer.subscribe(
                        self.stream, on_message,
                        offset_specification=ConsumerOffsetSpecification(
                            OffsetType.OFFSET, self.next_offset)), 20)
                    self.error = None
                    return
                except Exception as e:
                    self.error = f"{self.process} reader: {type(e).__name__}: {e}"
                    await _close(consumer)
                    consumer = None
                    await asyncio.sleep(0.5)

        try:
            await subscribe()
            self.ready.set()
            progress, since = self.next_offset, time.monotonic()
            while not self.stopped.is_set():
                await asyncio.sleep(0.5)
                if self.next_offset != progress or not self.behind(self):
                    progress, since = self.next_offset, time.monotonic()
                elif time.monotonic() - since > 5:
                    # another replica's reader is ahead and this one has not moved for
                    # 5 s: rstream's consumer stopped after the stream's leader changed
                    # (seen in a 10-minute run); subscribe again from the next offset
                    self.resubscribed += 1
                    self.fresh = True
                    await _close(consumer)
                    consumer = None
                    await subscribe()
                    progress, since = self.next_offset, time.monotonic()
        finally:
            self.ready.set()
            self.idle.set()
            await _close(consumer)


async def _close(client) -> None:
    if client is not None:
        try:
            await asyncio.wait_for(client.close(), 5)
        except Exception:
            pass


class _Publisher(Publisher):
    """A node's publisher: stream messages with a publishing id (the stream drops a
    repeated one), each confirmed or sent again on a new producer."""

    MEMBER = "node"
    PAUSE = 0.3

    def __init__(self, node: _Node, process: str, run: RabbitRun, log: EventLog,
                 rng: random.Random, count, confirmed: set[str], stream: str):
        super().__init__(process, run, log, rng, count)
        self.node, self.stream = node, stream
        self.confirmed = confirmed  # the run's confirmed messages, shared
        self.producer = None

    async def open(self, deadline: float) -> None:
        from rstream import Producer, RawMessage  # the client library, when it records

        self.make, self.raw = Producer, RawMessage

    async def put(self, k: int, msg: str, rec: dict) -> None:
        if self.producer is None:
            self.producer = self.make(self.node.host, self.node.stream_port,
                                      username=USER, password=PASSWORD)
            await asyncio.wait_for(self.producer.start(), 20)
        await asyncio.wait_for(self.producer.send_wait(
            self.stream, self.raw(msg.encode(), publishing_id=k + 1),
            publisher_name=self.process, timeout=5), 10)
        rec["x_put"] = "ok"
        rec["x_pid"] = k + 1
        self.confirmed.add(msg)

    async def failed(self) -> None:
        await _close(self.producer)
        self.producer = None

    async def shut(self) -> None:
        await _close(self.producer)


class _Cluster(ClientLoop):
    """The nodes seen by the fault schedule (:class:`tomkit.record.faults.Cluster`);
    the clients are tasks of one asyncio loop in a thread of its own."""

    QUIET_CLOSE = True

    def __init__(self, nodes: list[_Node], run: RabbitRun, log: EventLog,
                 rng: random.Random, deadline: float, stream: str):
        super().__init__({n.name: n for n in nodes}, run, log, rng, deadline,
                         "rabbitmq-clients")
        self.nodes: dict[str, _Node] = self.hosts
        self.stream = stream
        self.readers: dict[str, _Reader] = {}
        self.publishers: dict[str, _Publisher] = {}
        self.old: list[_Reader] = []
        self.confirmed: set[str] = set()

    def attach(self, server: str, send: bool = True) -> None:
        proc = self.process(server)
        node = self.nodes[server]
        if send:
            self.log.add(proc, "view", view=f"stream-{self.stream}", members=self.members)
            self.publishers[server] = _Publisher(node, proc, self.run, self.log,
                                                 random.Random(self.rng.random()), self.count,
                                                 self.confirmed, self.stream)
        reader = _Reader(node, proc, self.log, self.stream, behind=self._behind)
        self.readers[server] = reader
        self.spawn(reader.run(self.deadline))

    def _behind(self, reader: _Reader) -> bool:
        """Whether the replica's reader has something left to read: another running
        replica's reader is ahead, or a confirmed message is not yet read from it (the
        consumers of both survivors stopped at one offset after the leader was killed,
        so neither was ahead of the other: docs/case-studies.md)."""
        return any(r.next_offset > reader.next_offset for n, r in self.readers.items()
                   if n in self.running() and r is not reader) \
            or not self.confirmed <= reader.delivered_msgs

    async def _leader(self) -> str | None:
        from rstream import Producer

        for name in self.running():
            producer = Producer(self.nodes[name].host, self.nodes[name].stream_port,
                                username=USER, password=PASSWORD)
            try:
                await asyncio.wait_for(producer.start(), 5)
                client = await producer.default_client
                leader, _ = await asyncio.wait_for(client.query_leader_and_replicas(self.stream), 5)
            except Exception:
                continue
            finally:
                await _close(producer)
            for n in self.nodes.values():
                if n.host == leader.host:
                    return n.name
        return None

    # -- the Cluster protocol
    def leader(self) -> str | None:
        return self.call(self._leader())

    def kill(self, server: str) -> None:
        self.nodes[server].server.kill()
        self.dead.add(server)
        if server in self.publishers:
            self.publishers[server].stopped.set()
        r = self.readers[server]
        r.stopped.set()
        r.idle.wait(15)
        self.log.add(self.process(server), "crash")

    def restart(self, server: str) -> None:
        self.old.append(self.readers[server])
        self.incarnation[server] += 1
        self.dead.discard(server)
        self.nodes[server].server.start()
        self.log.add(self.process(server), "join")
        self.attach(server)  # its new process reads (once the node is up) and publishes
        self.spawn(self.publishers[server].run(self.send_until, self.retry_until))


async def _create_stream(host: str, port: int, stream: str, replicas: int,
                         deadline: float) -> None:
    from rstream import Producer

    last = None
    while time.monotonic() < deadline:
        producer = Producer(host, port, username=USER, password=PASSWORD)
        try:
            await asyncio.wait_for(producer.start(), 20)
            await producer.create_stream(stream, arguments={
                "x-initial-cluster-size": replicas}, exists_ok=True)
            return
        except Exception as e:
            last = e
            await asyncio.sleep(1)
        finally:
            await _close(producer)
    raise RuntimeError(f"rabbitmq: could not create the stream: {last}")


class Boot:
    """Nodes booted and clustered in their namespaces: the stage of one or more runs.

    Booting three Erlang VMs is most of a run's time (25 s unloaded, up to 2 minutes
    under load), so runs may share one boot (:func:`booted`), each with a stream of its
    own; a node that a run killed is started again before the next run."""

    def __init__(self, nodes: int, workdir: str | Path | None = None):
        self.net = Network([f"r{i + 1}" for i in range(nodes)])
        self.tmp = Path(tempfile.mkdtemp(prefix="tomkit-rabbitmq-", dir=workdir))
        cookie = self.tmp / ".erlang.cookie"
        cookie.write_text(f"TOMKIT{random.Random().getrandbits(64):016X}")
        cookie.chmod(0o600)
        (self.tmp / "inetrc").write_text(_inetrc(self.net))
        self.nodes = [_Node(i + 1, self.net, self.tmp) for i in range(nodes)]
        self.runs = 0

    def start(self, deadline: float) -> None:
        """Make the namespaces, start every node and wait until each is up."""
        self.net.up()
        for n in self.nodes:
            n.epmd.start()
        for n in self.nodes:
            # a VM that finds no epmd starts one of its own, a daemon that would outlive
            # the run: each VM starts once the recorder's epmd answers
            until(n.epmd_up, deadline, f"rabbitmq: {n.name}'s epmd did not start",
                  self.tmp)
            n.server.start()
        for n in self.nodes:
            _await_startup(n, deadline, self.tmp)

    def ready(self, deadline: float) -> None:
        """Before a run on a used boot: every partition healed, every node running."""
        for s in list(self.net.cut):
            self.net.heal(s)
        down = [n for n in self.nodes if not n.server.alive()]
        for n in self.nodes:
            n.server.resume()
        for n in down:
            n.server.start()
        for n in down:
            _await_startup(n, deadline, self.tmp)

    def stop(self) -> None:
        for n in self.nodes:
            n.server.stop()
        for n in self.nodes:
            n.epmd.stop()
        self.net.down()
        if not os.environ.get("TOMKIT_KEEP_RECORD"):
            shutil.rmtree(self.tmp, ignore_errors=True)


@contextlib.contextmanager
def booted(nodes: int = 3, timeout: float = 240.0,
           workdir: str | Path | None = None) -> Iterator[Boot]:
    """A cluster booted once for several runs (``record(..., boot=b)``); everything it
    made is removed at the end, also on an error or Ctrl-C."""
    why = available()
    if why:
        raise RuntimeError(why)
    boot = Boot(nodes, workdir)
    try:
        boot.start(time.monotonic() + timeout)
        yield boot
    finally:
        boot.stop()


def record(run: RabbitRun, out: str | Path, *, seed: int = 1, timeout: float = 60.0,
           workdir: str | Path | None = None, say=print, boot: Boot | None = None) -> EventLog:
    """Record one run into ``out``; the log. ``seed`` seeds the publishers' pauses and
    names the run (RabbitMQ's schedule is not seeded). Without ``boot`` the run boots
    its own cluster (within ``timeout``); with one, it runs on that cluster, within
    ``timeout`` of its own."""
    why = available()
    if why:
        raise RuntimeError(why)
    deadline = time.monotonic() + timeout
    if boot is None:
        boot = Boot(run.nodes, workdir)
        try:
            boot.start(deadline)
            return _on(boot, run, out, seed, deadline, say)
        finally:
            boot.stop()
    if len(boot.nodes) != run.nodes:
        raise ValueError(f"the run wants {run.nodes} nodes, the boot has {len(boot.nodes)}")
    boot.ready(deadline)
    return _on(boot, run, out, seed, deadline, say)


def _on(boot: Boot, run: RabbitRun, out: str | Path, seed: int, deadline: float,
        say) -> EventLog:
    with boot.net.clients():  # the clients, and every thread of the run, in the hub
        return _record(boot, run, out, seed, deadline, say)


def _record(boot: Boot, run: RabbitRun, out: str | Path, seed: int, deadline: float,
            say) -> EventLog:
    rng = random.Random(seed)
    log = EventLog(f"rabbitmq-{run.name}-s{seed}")
    nodes, tmp = boot.nodes, boot.tmp
    boot.runs += 1
    stream = f"{STREAM}-{run.name}-s{seed}-{boot.runs}"
    cluster = _Cluster(nodes, run, log, rng, deadline, stream)
    faults: FaultRunner | None = None
    try:
        cluster.call(_create_stream(nodes[0].host, nodes[0].stream_port, stream, run.nodes,
                                    deadline),
                     timeout=max(1.0, deadline - time.monotonic()))
        until(lambda: cluster.leader() is not None, deadline,
              "rabbitmq: the stream has no leader", tmp)
        for n in nodes:
            cluster.attach(n.name)
        for r in cluster.readers.values():
            until(r.ready.is_set, deadline, f"rabbitmq: {r.process}'s consumer did not "
                  "subscribe", tmp)
            if r.error:
                raise RuntimeError(f"rabbitmq: {r.error}")
        for p in cluster.publishers.values():
            cluster.spawn(p.run(cluster.send_until, cluster.retry_until))
        if run.faults:
            faults = FaultRunner(run.faults, cluster, log, progress=cluster.progress,
                                 deadline=deadline, say=say, period=run.period)
            faults.start()
        if faults is not None:
            if run.period is not None:
                faults.halt.wait(max(0.0, cluster.send_until - time.monotonic()))
                faults.halt.set()
            faults.done.wait(max(0.0, deadline - time.monotonic()))
            if faults.error is not None:
                raise RuntimeError(f"rabbitmq: fault schedule: {faults.error}")
        for p in list(cluster.publishers.values()):
            p.done.wait(max(0.0, deadline - time.monotonic()))
        _drain(cluster, deadline, say)
    finally:
        log.freeze()
        if faults is not None:
            faults.stop_event.set()
        for r in [*cluster.readers.values(), *cluster.old]:
            r.stopped.set()
        for p in cluster.publishers.values():
            p.stopped.set()
        cluster.close()
    for r in [*cluster.readers.values(), *cluster.old]:
        if r.error:
            say(f"  warning: {r.error}")
        if r.resubscribed:
            say(f"  {r.process}'s consumer stalled and subscribed again {r.resubscribed} "
                "time(s)")
    lost = sorted(_acked(log) - {r["msg"] for r in log.records if r["kind"] == "deliver"})
    if lost:
        say(f"  confirmed but read from no replica: {len(lost)} ({', '.join(lost[:5])})")
    log.write(out)
    return log


def _await_startup(n: _Node, deadline: float, tmp: Path) -> None:
    """Until the node's ``rabbitmqctl await_startup`` succeeds (it fails at once while the
    node has not yet registered with epmd)."""
    last = ""
    while time.monotonic() < deadline:
        gone = n.server.exited()
        if gone:
            raise RuntimeError(f"rabbitmq: {gone}")
        left = deadline - time.monotonic()
        try:
            r = n.ctl("await_startup", "--timeout", str(int(max(1, left))),
                      timeout=max(1.0, left))
        except subprocess.TimeoutExpired:
            break
        if r.returncode == 0:
            return
        last = (r.stderr or r.stdout).strip().splitlines()[:1]
        time.sleep(1)
    raise RuntimeError(f"rabbitmq: {n.name} did not start before the deadline ({last}; "
                       f"logs in {tmp})")


def _acked(log: EventLog) -> set[str]:
    return {r["msg"] for r in list(log.records) if r["kind"] == "send"
            and r.get("x_put") == "ok"}


def _drain(cluster: _Cluster, deadline: float, say) -> None:
    """Until every running node's replica holds every confirmed message and every message
    another running replica holds, and deliveries settled."""
    alive = [cluster.readers[s] for s in cluster.members if s not in cluster.dead]
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        known = set().union(_acked(cluster.log), *(r.delivered_msgs for r in alive))
        now = tuple(len(r.delivered_msgs) for r in alive)
        if now != last or not all(known <= r.delivered_msgs for r in alive):
            last, since = now, time.monotonic()
        elif time.monotonic() - since > 1.0:
            return
        time.sleep(0.1)
    say("  warning: not drained by the deadline: a running replica misses a confirmed or "
        "stored message, or deliveries were still changing")


#: what this recorder provides (tomkit/record/system.py)
SYSTEM = System("rabbitmq", RUNS, ACTIONS, record, available,
                profile_file=profile_file, long_runs=True, boot=booted)
