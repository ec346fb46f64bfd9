"""``tomkit run``: Maelstrom's test loop, run by tomkit on any node program.

One run: start ``--node-count`` copies of the node program (``n0``, ``n1``, ...), send
each ``init`` and wait for ``init_ok``; let the workload set up (broadcast's
``topology``); run ``--concurrency`` clients (``c0``, ...) for ``--time-limit``
seconds at ``--rate`` requests a second in total, while the nemesis injects its faults;
then end every fault, give the cluster ``recovery`` seconds, do the workload's final
reads, and stop every node. The run folder gets the node logs (``nodes/<id>.log``, each
node's stderr), the history (``history.jsonl``), the network journal
(``messages.jsonl``), the nemesis log (``nemesis.jsonl``), the v1 trace
(``trace.jsonl``) and the verdict (``results.json``).

Everything random (the clients' operations and pauses, the network's delays, the
nemesis's schedule) is drawn from streams seeded by ``--seed``; the node programs and
the operating system's scheduling are not the harness's to fix, so two runs with one
seed ask the same questions but may get different answers.

Robust against the node: a line that is not a Maelstrom message, a line too long, a
node that does not read its input, a node that never answers ``init``: the run stops
with an error naming the node (and the tail of its stderr); a node that exits on its
own is a recorded crash and judged; a node that hangs is timed out by the clients and
killed at the end. Every node's process group is ended at exit, on error and on Ctrl-C.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tomkit import check
from tomkit.traces.interrupt import Terminated
from tomkit.traces.writer import write_records

from .client import Client, History
from .nemesis import NemesisEvent, plan
from .network import Latency, Network
from .node_process import NodeProcess, end_all, settle, start_node
from .protocol import Message, dumps_line
from .services import make_services
from .workloads import WORKLOADS, Anomaly

__all__ = ["Harness", "HarnessError", "RunConfig", "RunResult", "run"]


class HarnessError(Exception):
    """The run could not go on (a node that could not be run or broke the protocol):
    the command's exit 2."""


@dataclass
class RunConfig:
    workload: str
    bin: list[str]
    node_count: int = 5
    concurrency: int | None = None  # None: one client per node
    time_limit: float = 10.0
    rate: float = 5.0
    latency: float = 0.0  # mean, milliseconds
    latency_dist: str = "constant"
    nemesis: frozenset[str] = frozenset()
    nemesis_interval: float = 10.0
    seed: int = 1
    out: Path = Path("store/latest")
    timeout: float = 5.0  # a client's wait for a reply, seconds
    init_timeout: float = 10.0
    recovery: float = 2.0  # seconds between the final heal and the final reads
    topology: str = "grid"
    key_count: int = 3  # kafka
    max_messages: int = 5_000_000  # a node that floods the network past this stops the run
    #: Maelstrom's --availability: the fraction of operations that must succeed (1.0 for
    #: "total"); None: no availability check
    availability: float | None = None
    log_stderr: bool = False  # show each node's stderr on the harness's, as it comes

    def to_dict(self) -> dict[str, Any]:
        d = {k: (sorted(v) if isinstance(v, frozenset) else str(v) if isinstance(v, Path)
                 else v) for k, v in self.__dict__.items()}
        d["concurrency"] = self.clients
        return d

    @property
    def clients(self) -> int:
        return self.concurrency if self.concurrency is not None else self.node_count


@dataclass
class RunResult:
    config: RunConfig
    valid: bool
    anomalies: list[Anomaly]
    faults: list[str]
    verdicts: dict[str, str]
    explanations: dict[str, str]
    stats: dict[str, Any]
    out: Path
    trace: Path
    nemesis: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        # verdict: the word every report uses; valid (the same as a bool) stays for one
        # release (docs/api.md)
        return {"verdict": "valid" if self.valid else "invalid",
                "valid": self.valid, "config": self.config.to_dict(),
                "verdicts": self.verdicts, "explanations": self.explanations,
                "anomalies": [a.to_dict() for a in self.anomalies], "faults": self.faults,
                "stats": self.stats, "nemesis": self.nemesis, "trace": str(self.trace)}


class Harness:
    """One run (module docstring); :meth:`run` does it all."""

    def __init__(self, config: RunConfig):
        if config.workload not in WORKLOADS:
            raise HarnessError(f"unknown workload {config.workload!r}; known: "
                               f"{', '.join(WORKLOADS)}")
        if config.node_count < 1 or config.clients < 1:
            raise HarnessError("--node-count and --concurrency must be at least 1")
        self.cfg = config
        seeds = random.Random(config.seed)
        self.net_rng = random.Random(seeds.random())
        self.client_seed = seeds.random()
        self.nemesis_seed = seeds.random()
        self.service_rng = random.Random(seeds.random())
        self.workload_rng = random.Random(seeds.random())
        self.nodes = [f"n{i}" for i in range(config.node_count)]
        self.procs: dict[str, NodeProcess | None] = {n: None for n in self.nodes}
        self.incarnation = {n: 0 for n in self.nodes}
        self.faults: list[str] = []
        self.crashes: list[tuple[float, str, str]] = []  # time, process name, how
        #: (time, process name) of each incarnation's init_ok: its join record, so that a
        #: node that delivers nothing is still a process of the trace, owed every message
        self.joins: list[tuple[float, str]] = []
        self.expected_exits: set[tuple[str, int]] = set()
        self.history = History()
        self.nemesis_log: list[NemesisEvent] = []
        self.killed: set[str] = set()
        self.paused: set[str] = set()
        self.running = False
        self.stopping = False
        self.workload = WORKLOADS[config.workload](self)
        self._init_waits: dict[str, tuple[int, asyncio.Future]] = {}
        self.phase = {"seconds": 0.0, "cpu": 0.0, "messages": 0}
        self.judged: set[str] = set()  # the traces holding the workload's records

    # ---- time, names ----------------------------------------------------------------

    def now(self) -> float:
        return self.loop.time() - self.t0

    def name(self, node: str) -> str:
        """The process name of ``node``'s current incarnation: n1, then n1#2, ..."""
        k = self.incarnation[node]
        return node if k == 0 else f"{node}#{k + 1}"

    def stderr_tail(self, node: str, lines: int = 8) -> str:
        path = self.cfg.out / "nodes" / f"{node}.log"
        try:
            text = path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return "\n".join("    " + t for t in text)

    # ---- node callbacks -------------------------------------------------------------

    def _on_message(self, node: str, msg: Message) -> None:
        wait = self._init_waits.get(node)
        if wait is not None and msg.body.get("type") == "init_ok":
            if msg.body.get("in_reply_to") == wait[0] and not wait[1].done():
                wait[1].set_result(True)
            return
        if len(self.net.journal) >= self.cfg.max_messages:
            self._fail(HarnessError(f"node {node} floods the network: "
                                    f"{len(self.net.journal)} messages in {self.now():.1f} s"
                                    " (over --max-messages)"))
            return
        self.net.route(msg, self.name(node))

    def _fail(self, exc: Exception) -> None:
        if not self.fatal.done():
            self.fatal.set_exception(exc if isinstance(exc, HarnessError)
                                     else HarnessError(str(exc)))

    def _on_error(self, node: str, exc: Exception) -> None:
        tail = self.stderr_tail(node)
        self._fail(HarnessError(str(exc) + (f"\n  its stderr ends:\n{tail}" if tail else "")))

    def _on_exit(self, node: str, incarnation: int, rc: int | None) -> None:
        if self.procs.get(node) is not None and self.procs[node].incarnation == incarnation:
            self.procs[node] = None
        if (node, incarnation) in self.expected_exits or self.stopping:
            return
        name = node if incarnation == 0 else f"{node}#{incarnation + 1}"
        wait = self._init_waits.get(node)
        if wait is not None and not wait[1].done():
            wait[1].set_exception(HarnessError(
                f"node {node} exited with code {rc} before answering init"
                + self._tail_text(node)))
            return
        t = self.now()
        self.crashes.append((t, name, f"exited with code {rc}"))
        self.faults.append(f"{name} exited on its own with code {rc} at {t:.3f} s")

    def _tail_text(self, node: str) -> str:
        tail = self.stderr_tail(node)
        return f"\n  its stderr ends:\n{tail}" if tail else "\n  (its stderr is empty)"

    # ---- nodes ----------------------------------------------------------------------

    async def _start(self, node: str) -> None:
        """Start the current incarnation of ``node`` and wait for its init_ok."""
        inc = self.incarnation[node]
        # the wait exists before the process does: a node that exits at once is seen by
        # _on_exit while start_node still awaits, and must fail this wait, not time it out
        fut = self.loop.create_future()
        msg_id = 1
        self._init_waits[node] = (msg_id, fut)
        try:
            proc = await start_node(self.cfg.bin, node, inc,
                                    self.cfg.out / "nodes" / f"{node}.log",
                                    self._on_message, self._on_error, self._on_exit,
                                    log_stderr=self.cfg.log_stderr)
        except OSError as e:
            self._init_waits.pop(node, None)
            raise HarnessError(f"cannot run the node program {self.cfg.bin[0]!r}: "
                               f"{e.strerror or e}") from None
        self.procs[node] = proc
        init_client = f"c{self.cfg.clients + self.nodes.index(node)}"
        proc.send(Message(init_client, node, {"type": "init", "msg_id": msg_id,
                                              "node_id": node, "node_ids": self.nodes}))
        try:
            await self._race(asyncio.wait_for(fut, self.cfg.init_timeout))
            self.joins.append((self.now(), self.name(node)))
        except asyncio.TimeoutError:
            raise HarnessError(f"node {node} did not answer init with init_ok within "
                               f"{self.cfg.init_timeout:g} s" + self._tail_text(node)
                               ) from None
        finally:
            self._init_waits.pop(node, None)

    async def _race(self, aw: Any) -> Any:
        """Await ``aw`` unless the run fails first (then raise its error)."""
        task = asyncio.ensure_future(aw)
        done, _ = await asyncio.wait({task, self.fatal}, return_when=asyncio.FIRST_COMPLETED)
        if self.fatal in done:
            task.cancel()
            # the cancelled work's own outcome is not wanted; unread, asyncio printed it as
            # a traceback ("exception was never retrieved") below the run's one line
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self.fatal.result()
        return task.result()

    def _kill(self, node: str) -> None:
        proc = self.procs.get(node)
        if proc is None:
            return
        self.expected_exits.add((node, proc.incarnation))
        self.crashes.append((self.now(), self.name(node), "killed by the nemesis"))
        proc.kill()
        self.procs[node] = None
        self.killed.add(node)

    async def _restart(self, node: str) -> None:
        self.incarnation[node] += 1
        self.killed.discard(node)
        await self._start(node)

    async def _apply(self, ev: NemesisEvent) -> None:
        logged = NemesisEvent(self.now(), ev.action, ev.fault, ev.nodes, ev.groups)
        self.nemesis_log.append(logged)
        if ev.fault == "partition":
            if ev.action == "start":
                self.net.partition([list(g) for g in ev.groups])
            else:
                self.net.heal()
        elif ev.fault == "kill":
            for n in ev.nodes:
                if ev.action == "start":
                    self._kill(n)
                elif n in self.killed:
                    await self._restart(n)
        elif ev.fault == "pause":
            for n in ev.nodes:
                proc = self.procs.get(n)
                if proc is None:
                    continue
                if ev.action == "start":
                    proc.pause()
                    self.paused.add(n)
                else:
                    proc.resume()
                    self.paused.discard(n)

    def schedule(self) -> list[NemesisEvent]:
        """The nemesis's events for this run's seed (the same on every call)."""
        return plan(set(self.cfg.nemesis), self.nodes, self.cfg.nemesis_interval,
                    self.cfg.time_limit, random.Random(self.nemesis_seed)).events

    async def _nemesis(self) -> None:
        start = self.now()  # the schedule counts from the clients' start, as the time limit
        for ev in self.schedule():
            delay = start + ev.time - self.now()
            if delay > 0:
                try:  # sleep until the event, or until the time limit stops the nemesis
                    await asyncio.wait_for(self._stopped.wait(), delay)
                    return
                except asyncio.TimeoutError:
                    pass
            if not self.running:
                return
            await self._apply(ev)  # never cancelled halfway (a restart waits for init_ok)

    async def _heal(self) -> None:
        if self.net.cut:
            self.net.heal()
            self.nemesis_log.append(NemesisEvent(self.now(), "stop", "partition"))
        for n in sorted(self.paused):
            proc = self.procs.get(n)
            if proc is not None:
                proc.resume()
        if self.paused:
            self.nemesis_log.append(NemesisEvent(self.now(), "stop", "pause",
                                                 tuple(sorted(self.paused))))
            self.paused.clear()
        if self.killed:
            down = tuple(sorted(self.killed))
            self.nemesis_log.append(NemesisEvent(self.now(), "stop", "kill", down))
            for n in down:
                await self._restart(n)

    async def _stop_all(self, starting: list[NodeProcess] = []) -> None:  # noqa: B006 - read only
        self.stopping = True
        live = [p for p in self.procs.values() if p is not None]
        live += [p for p in starting if p not in live]
        await asyncio.gather(*(p.stop(2.0) for p in live), return_exceptions=True)
        end_all()
        await asyncio.gather(*(p.close(2.0) for p in live), return_exceptions=True)

    # ---- clients --------------------------------------------------------------------

    def _node_receives(self, msg: Message, process: str, time: float) -> None:
        client = self.clients_by_id.get(msg.src)
        op = getattr(client, "current", None)
        if op is not None and msg.body.get("msg_id") == client.next_id:
            op.received_by, op.received_at = process, time

    async def _client_loop(self, client: Client, rng: random.Random) -> None:
        # Jepsen's stagger: a pause uniform on [0, 2 x mean], mean = clients / rate
        mean = self.cfg.clients / self.cfg.rate if self.cfg.rate > 0 else None
        while self.running:
            if mean is not None:
                await asyncio.sleep(rng.uniform(0, 2 * mean))
            if not self.running:
                break
            await self.workload.operation(client, rng)

    # ---- the run --------------------------------------------------------------------

    async def run_async(self) -> RunResult:
        self.loop = asyncio.get_running_loop()
        self.t0 = self.loop.time()
        self.fatal: asyncio.Future = self.loop.create_future()
        self.fatal.add_done_callback(lambda f: f.exception())  # retrieved: no warning
        self._stopped = asyncio.Event()
        self.cfg.out.mkdir(parents=True, exist_ok=True)
        (self.cfg.out / "nodes").mkdir(exist_ok=True)
        self.services = make_services(self.service_rng, self.now)
        self.clients_by_id: dict[str, Client] = {}
        self.net = Network(
            Latency(self.cfg.latency, self.cfg.latency_dist), self.net_rng, self.now,
            node_sink=lambda d: self.procs[d] if d in self.procs else False,
            node_name=self.name,
            client_sink=lambda d: (self.clients_by_id[d].receive
                                   if d in self.clients_by_id else None),
            service_sink=lambda d: self.services.get(d),
            on_fault=self.faults.append, on_node_receives=self._node_receives)
        for i in range(self.cfg.clients):
            c = Client(i, self.nodes[i % len(self.nodes)], self.net.route, self.now,
                       self.faults)
            self.clients_by_id[c.id] = c
        try:
            await self._race(asyncio.gather(*(self._start(n) for n in self.nodes)))
            await self._race(self.workload.setup())
            self.running = True
            rngs = random.Random(self.client_seed)
            tasks = [asyncio.ensure_future(self._client_loop(c, random.Random(rngs.random())))
                     for c in self.clients_by_id.values()]
            nemesis = asyncio.ensure_future(self._nemesis())
            # the harness's own cost: CPU seconds of this process per message routed
            # while the clients run (a machine's load changes the wall time, not this)
            cpu0, sent0, wall0 = time.process_time(), len(self.net.journal), self.now()
            try:
                await self._race(asyncio.sleep(self.cfg.time_limit))
            finally:
                self.running = False
                self._stopped.set()
            await self._race(nemesis)
            self.phase = {"seconds": self.now() - wall0, "cpu": time.process_time() - cpu0,
                          "messages": len(self.net.journal) - sent0}
            await self._race(asyncio.wait_for(asyncio.gather(*tasks),
                                              self.cfg.timeout + 5))
            await self._race(self._heal())
            await self._race(asyncio.sleep(self.cfg.recovery))
            await self._race(self.workload.final())
            elapsed = self.now()
        finally:
            for t in [*locals().get("tasks", []), locals().get("nemesis")]:
                if t is not None:
                    t.cancel()
            # nodes still starting (a Ctrl-C during start-up) are stopped with the rest
            await self._stop_all(await settle())
        return self._finish(elapsed)

    # ---- results --------------------------------------------------------------------

    def trace_records(self) -> list[dict[str, Any]]:
        trace = f"{self.cfg.workload}-seed{self.cfg.seed}"
        rows: list[tuple[float, int, dict[str, Any]]] = []
        for r in self.workload.records(self.history):
            rows.append((r["time"], len(rows), r))
        self.judged = {r.get("trace", trace) for _, _, r in rows}
        node_ids = set(self.nodes)
        for s in self.net.journal:
            if s.msg.src in node_ids and s.msg.dest in node_ids:
                r = {"process": s.src, "kind": "packet", "time": s.time,
                     "x_dest": s.msg.dest, "x_type": s.msg.body.get("type")}
                if s.fate != "ok":
                    r["x_dropped"] = s.fate
                rows.append((s.time, len(rows), r))
        for t, name, how in self.crashes:
            rows.append((t, len(rows), {"process": name, "kind": "crash", "time": t,
                                        "x_how": how}))
        for t, name in self.joins:
            rows.append((t, len(rows), {"process": name, "kind": "join", "time": t}))
        # grouped by trace (kafka writes one per key), each in time order
        rows.sort(key=lambda x: (x[2].get("trace", trace), x[0], x[1]))
        out = []
        for t, _, r in rows:
            r = {"trace": trace, **r, "time": round(t, 6)}
            r["real_time"] = r["time"]
            out.append(r)
        return out

    def _finish(self, elapsed: float) -> RunResult:
        out = self.cfg.out
        records = self.trace_records()
        trace_path = out / "trace.jsonl"
        write_records(trace_path, records, grouped=True)
        with open(out / "history.jsonl", "wb") as f:
            f.writelines(dumps_line(ev) for op in self.history.ops for ev in op.to_events())
        with open(out / "messages.jsonl", "wb") as f:
            f.writelines(dumps_line({"time": round(s.time, 6), "from": s.src, "src": s.msg.src,
                                     "dest": s.msg.dest, "body": s.msg.body, "fate": s.fate})
                         for s in self.net.journal)
        nemesis = [e.to_dict() for e in self.nemesis_log]
        with open(out / "nemesis.jsonl", "w") as f:
            for e in nemesis:
                f.write(json.dumps(e) + "\n")
        verdicts, explanations = self._judge(trace_path)
        anomalies = self.workload.anomalies(self.history)
        anomalies.extend(self._availability())
        for t, name, how in self.crashes:
            if how != "killed by the nemesis":
                anomalies.append(Anomaly("crash", "-", f"{name} {how} at {t:.3f} s "
                                         "without being killed"))
        valid = not anomalies and all(v != "violated" for v in verdicts.values())
        ops = self.history.ops
        stats = {
            "elapsed": round(elapsed, 3), "ops": len(ops),
            "ok": sum(o.type == "ok" for o in ops), "fail": sum(o.type == "fail" for o in ops),
            "info": sum(o.type == "info" for o in ops),
            "messages": len(self.net.journal),
            "node_messages": sum(1 for s in self.net.journal
                                 if s.msg.src[:1] == "n" and s.msg.dest[:1] == "n"),
            "dropped": sum(1 for s in self.net.journal if s.fate != "ok"),
            "late_replies": sum(c.late for c in self.clients_by_id.values()),
            "seq_kv_stale_reads": self.services["seq-kv"].stale_reads,
            "service_requests": {k: s.requests for k, s in self.services.items()
                                 if s.requests},
            "records": len(records),
            "client_phase": {k: round(v, 3) for k, v in self.phase.items()},
        }
        result = RunResult(self.cfg, valid, anomalies, self.faults, verdicts, explanations,
                           stats, out, trace_path, nemesis)
        (out / "results.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n")
        return result

    def _availability(self) -> list[Anomaly]:
        """Maelstrom's availability checker: the fraction of operations that completed
        ok, against ``--availability``."""
        a, ops = self.cfg.availability, self.history.ops
        if a is None or not ops:
            return []
        ok = sum(o.type == "ok" for o in ops)
        if ok / len(ops) >= a:
            return []
        return [Anomaly("availability", "-", f"{ok} of {len(ops)} operations succeeded "
                        f"({ok / len(ops):.3f}), below --availability {a:g}")]

    def _judge(self, trace_path: Path) -> tuple[dict[str, str], dict[str, str]]:
        """The workload's properties on the trace, by the checker's one registry."""
        if not self.workload.properties:  # the counters: judged on the history alone
            return {}, {}
        report = check(trace_path, properties=list(self.workload.properties))
        worst: dict[str, Any] = {}
        explanations: dict[str, str] = {}
        for outcome in report.outcomes:  # kafka: one trace per key; the worst verdict wins
            if outcome.trace not in self.judged:
                continue  # kafka's node trace: packets, joins, crashes, no client operation
            for name, verdict in outcome.verdicts.items():
                if name not in worst or verdict > worst[name]:
                    worst[name] = verdict
                    res = outcome.results.get(name)
                    if res is not None and res.explanation:
                        prefix = f"[{outcome.trace}] " if len(report.outcomes) > 1 else ""
                        explanations[name] = prefix + res.explanation
        return {n: str(v) for n, v in worst.items()}, explanations


def run(config: RunConfig) -> RunResult:
    """Run one test; raises HarnessError (exit 2). Ctrl-C and SIGTERM end every node."""

    terminated: list[bool] = []
    before = signal.getsignal(signal.SIGTERM)

    def on_term(task: asyncio.Task) -> None:
        terminated.append(True)
        task.cancel()

    async def main() -> RunResult:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, on_term, asyncio.current_task())
        try:
            return await Harness(config).run_async()
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
            signal.signal(signal.SIGTERM, before)  # (the loop left SIG_DFL)
            # node starts still under way (a Ctrl-C during start-up) finish before the
            # loop closes, so that end_all ends their processes too (node_process.py)
            await settle()

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if terminated:  # said as a command stopped by SIGTERM (traces/interrupt.py)
            raise Terminated from None
        raise
    finally:
        end_all()
