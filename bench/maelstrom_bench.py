"""Benchmark of ``tomkit run``: messages routed per second with echo nodes, beside a bare
pipe-to-pipe relay in the same run; and the EDN reader against edn_format.

Both legs drive the same echo node program (tomkit/maelstrom/nodes/echo.py, one Python
process per node) with the same number of requests in flight:

- relay: a minimal asyncio loop that writes pre-encoded ``echo`` lines to the nodes'
  stdin and counts the lines that come back, parsing nothing: the cost of the nodes
  and the pipes, the ceiling any harness can reach with these nodes;
- harness: ``tomkit run -w echo --rate 0`` (clients as fast as answered): every message
  parsed, checked, journaled and routed, every operation in the history.

Messages count both ways (request and reply). Machines here are noisy, so the ratio of
the two legs measured in the same run is the figure; the issue's target is 20,000
messages/s for the harness on this 2-core machine.

    python bench/maelstrom_bench.py [--nodes 2] [--clients 8] [--seconds 5] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from tomkit.maelstrom.harness import RunConfig, run
from tomkit.maelstrom.node_process import end_all

NODE = Path(__file__).resolve().parents[1] / "tomkit" / "maelstrom" / "nodes" / "echo.py"


class _Relay(asyncio.SubprocessProtocol):
    def __init__(self, line: bytes, counter: list[int]):
        self.line, self.counter, self.buf = line, counter, b""

    def connection_made(self, transport):
        self.stdin = transport.get_pipe_transport(0)

    def pipe_data_received(self, fd, data):
        if fd != 1:
            return
        n = data.count(b"\n")
        self.counter[0] += n
        if self.counter[1]:
            self.stdin.write(self.line * n)  # one new request per answer


async def _relay(argv: list[str], nodes: int, clients: int,
                 seconds: float) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    counter = [0, 1]
    procs = []
    for i in range(nodes):
        line = (json.dumps({"src": "c0", "dest": f"n{i}", "body": {
            "type": "echo", "echo": "Please echo 35", "msg_id": 1}}) + "\n").encode()
        tr, proto = await loop.subprocess_exec(lambda line=line: _Relay(line, counter), *argv,
                                               stdin=asyncio.subprocess.PIPE,
                                               stdout=asyncio.subprocess.PIPE,
                                               start_new_session=True)
        init = json.dumps({"src": "c9", "dest": f"n{i}", "body": {
            "type": "init", "msg_id": 1, "node_id": f"n{i}",
            "node_ids": [f"n{j}" for j in range(nodes)]}}) + "\n"
        proto.stdin.write(init.encode())
        procs.append((tr, proto))
    await asyncio.sleep(0.5)
    per_node = max(1, clients // nodes)
    start_count, t0, cpu0 = counter[0], time.perf_counter(), time.process_time()
    for _, proto in procs:
        proto.stdin.write(proto.line * per_node)
    await asyncio.sleep(seconds)
    replies, elapsed = counter[0] - start_count, time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    counter[1] = 0
    for tr, _ in procs:
        tr.kill()
    for tr, _ in procs:
        await tr._wait()  # noqa: SLF001 - asyncio's own wait for the exit
        tr.close()
    return 2 * replies / elapsed, 2 * replies / max(cpu, 1e-9)


def relay_rate(argv: list[str], nodes: int, clients: int,
               seconds: float) -> tuple[float, float]:
    """Messages a second, wall clock and per CPU-second of the relay process."""
    try:
        return asyncio.run(_relay(argv, nodes, clients, seconds))
    finally:
        end_all()


def harness_rate(argv: list[str], nodes: int, clients: int, seconds: float,
                 seed: int) -> tuple[float, float, dict]:
    """Messages a second while the clients run, wall clock and per CPU-second of the
    harness process, and the run's statistics."""
    with tempfile.TemporaryDirectory() as d:
        res = run(RunConfig(workload="echo", bin=argv, node_count=nodes, concurrency=clients,
                            time_limit=seconds, rate=0.0, recovery=0.0, seed=seed,
                            out=Path(d) / "run", timeout=5.0))
    phase = res.stats["client_phase"]
    return (phase["messages"] / phase["seconds"], phase["messages"] / max(phase["cpu"], 1e-9),
            res.stats)


def edn_rates(lines: int = 2000) -> tuple[float, float | None]:
    """Microseconds per history line: tomkit's reader, and edn_format's (None if absent)."""
    from tomkit.traces.edn import loads

    line = ('{:index 3820, :time 4650651388, :type :ok, :process 0, :f :poll, '
            ':value [[:poll {"56" [[4 5] [5 6]] "57" [[1 2] [2 3]]}]]}')
    t = time.perf_counter()
    for _ in range(lines):
        loads(line)
    ours = (time.perf_counter() - t) / lines * 1e6
    try:
        import edn_format
    except ImportError:
        return ours, None
    n = max(1, lines // 20)
    t = time.perf_counter()
    for _ in range(n):
        edn_format.loads(line)
    return ours, (time.perf_counter() - t) / n * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--edn-lines", type=int, default=2000)
    args = ap.parse_args(argv)
    node = [sys.executable, str(NODE)]
    print(f"maelstrom bench (seed {args.seed}): echo nodes {args.nodes}, "
          f"{args.clients} requests in flight, {args.seconds:g} s per leg")
    print(f"{'':<28}{'msgs/s (wall)':>14}{'msgs per CPU-s':>16}")
    relay, relay_cpu = relay_rate(node, args.nodes, args.clients, args.seconds)
    print(f"  {'bare pipe-to-pipe relay':<26}{relay:>14,.0f}{relay_cpu:>16,.0f}")
    harness, harness_cpu, stats = harness_rate(node, args.nodes, args.clients, args.seconds,
                                               args.seed)
    print(f"  {'tomkit run -w echo':<26}{harness:>14,.0f}{harness_cpu:>16,.0f}  "
          f"({stats['ok']} echoes, {stats['info']} timed out)")
    print(f"  {'harness / relay':<26}{harness / relay:>14.2f}{harness_cpu / relay_cpu:>16.2f}")
    print(f"  {'us of CPU per message':<26}{'relay':>14} {1e6 / relay_cpu:.1f}, harness "
          f"{1e6 / harness_cpu:.1f}")
    print("  (per CPU-second: the messages one core routes, the machine's load aside; "
          f"the target is 20,000; load average {os.getloadavg()[0]:.1f})")
    ours, theirs = edn_rates(args.edn_lines)
    print(f"  EDN history line: tomkit's reader {ours:,.0f} us"
          + (f", edn_format {theirs:,.0f} us ({theirs / ours:.0f}x)" if theirs else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
