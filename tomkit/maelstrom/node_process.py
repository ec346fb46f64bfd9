"""One node program run as a child process, spoken to over its stdin and stdout.

Each node runs in its own session (``start_new_session``), so its process group holds
the node and every child it starts: killing, pausing (SIGSTOP) and resuming (SIGCONT)
act on the whole group, and the harness ends every group at exit, on error and on
Ctrl-C (:func:`end_all`, also registered with ``atexit``). A node's stderr goes
straight to its log file in the run folder (``nodes/<id>.log``, appended across
restarts), or, with ``--log-stderr`` (Maelstrom's flag), through a pipe to that file
and to the harness's own stderr, each line prefixed by the node's id. Stdout is read in
chunks and split into lines here: one callback per chunk, not one task per message,
which is what lets the harness route tens of thousands of messages a second.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

from .protocol import Message, NodeProtocolError, decode, encode

__all__ = ["NodeProcess", "end_all", "settle", "start_node"]

#: every live process group the harness started (pgid), ended by :func:`end_all`
_LIVE: set[int] = set()
#: node starts under way (``loop.subprocess_exec``), finished by :func:`settle`
_STARTING: set[asyncio.Future] = set()


def end_all() -> None:
    """SIGKILL every node process group still alive (atexit, and the last resort of
    an interrupted run)."""
    for pgid in list(_LIVE):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _LIVE.discard(pgid)


atexit.register(end_all)


class NodeProcess(asyncio.SubprocessProtocol):
    """The protocol side of one incarnation of a node.

    ``on_message(node, msg)`` gets each decoded message; ``on_error(node, exc)`` a
    :class:`NodeProtocolError` (bad JSON, a line over ``max_line`` bytes, input the node
    does not read); ``on_exit(node, incarnation, returncode)`` the exit.
    """

    def __init__(self, node: str, incarnation: int,
                 on_message: Callable[[str, Message], None],
                 on_error: Callable[[str, Exception], None],
                 on_exit: Callable[[str, int, int | None], None],
                 max_line: int, max_queued: int, stderr_log: IO[bytes] | None = None):
        self.node, self.incarnation = node, incarnation
        #: the node's log when its stderr comes through a pipe (--log-stderr), else None
        self.stderr_log = stderr_log
        self._ebuf = b""
        self.on_message, self.on_error, self.on_exit = on_message, on_error, on_exit
        self.max_line, self.max_queued = max_line, max_queued
        self.transport: asyncio.SubprocessTransport | None = None
        self.stdin: asyncio.WriteTransport | None = None
        self.pid: int | None = None
        self.lines = 0
        self.alive = True
        self.paused = False
        self._buf = b""
        self._out: list[bytes] = []
        self._stdout_closed = False
        self.exited = asyncio.get_running_loop().create_future()
        #: done when the node's stdout reached its end (every child holding it gone)
        self._eof = asyncio.get_running_loop().create_future()

    # ---- asyncio.SubprocessProtocol --------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport
        self.pid = transport.get_pid()
        _LIVE.add(self.pid)
        self.stdin = transport.get_pipe_transport(0)  # type: ignore[assignment]

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 2:
            self._stderr(data)
            return
        if fd != 1 or not self.alive:
            return
        buf = self._buf + data if self._buf else data
        *lines, self._buf = buf.split(b"\n")
        for line in lines:
            self.lines += 1
            try:
                msg = decode(line, self.node, self.lines)
            except NodeProtocolError as e:
                self.on_error(self.node, e)
                return
            self.on_message(self.node, msg)
        if len(self._buf) > self.max_line:
            self.on_error(self.node, NodeProtocolError(
                self.node, self.lines + 1,
                f"a line longer than {self.max_line} bytes with no newline (flooding?)",
                self._buf[:120]))
            self._buf = b""

    def _stderr(self, data: bytes) -> None:
        """Keep the node's stderr in its log and show its lines, prefixed by its id (a
        line over 64 KiB is shown in pieces)."""
        if self.stderr_log is None:
            return
        self.stderr_log.write(data)
        self.stderr_log.flush()
        *lines, self._ebuf = (self._ebuf + data).split(b"\n")
        if len(self._ebuf) > 1 << 16:
            lines.append(self._ebuf)
            self._ebuf = b""
        if lines:
            prefix = f"{self.node} | ".encode()
            sys.stderr.buffer.write(b"".join(prefix + line + b"\n" for line in lines))
            sys.stderr.flush()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 2 and self.stderr_log is not None:
            if self._ebuf:
                self._stderr(b"\n")
            self.stderr_log.close()
        if fd == 1:
            self._stdout_closed = True
            if not self._eof.done():
                self._eof.set_result(None)
            self._release()

    def _release(self) -> None:
        """Close the transport once the process exited and its stdout was read to the
        end (closing earlier would lose what a node wrote just before it exited)."""
        if self._stdout_closed and not self.alive and self.transport is not None:
            self.transport.close()

    def process_exited(self) -> None:
        rc = self.transport.get_returncode() if self.transport else None
        self.alive = False
        self._release()
        if self.pid is not None:
            _LIVE.discard(self.pid)
        if not self.exited.done():
            self.exited.set_result(rc)
        self.on_exit(self.node, self.incarnation, rc)

    # ---- the harness's side ----------------------------------------------------------

    def send(self, msg: Message) -> None:
        """Queue ``msg`` for the node's stdin. The queue is written once per turn of the
        event loop: one write (and one wake-up of the node) for every message routed to
        it in that turn, where a write per message would hand the CPU to the node at
        each one."""
        if not self.alive:
            return
        self._out.append(encode(msg))
        if len(self._out) == 1:
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        out, self._out = self._out, []
        if not self.alive or self.stdin is None or self.stdin.is_closing():
            return
        self.stdin.write(b"".join(out))
        if self.stdin.get_write_buffer_size() > self.max_queued:
            self.on_error(self.node, NodeProtocolError(
                self.node, self.lines,
                f"does not read its stdin: over {self.max_queued} bytes queued for it"))

    def signal(self, sig: int) -> None:
        if self.alive and self.pid is not None:
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.signal(signal.SIGKILL)  # ends a stopped (paused) group too
        self.paused = False

    def pause(self) -> None:
        self.signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self.signal(signal.SIGCONT)
        self.paused = False

    async def stop(self, grace: float) -> int | None:
        """Close stdin, SIGTERM the group, SIGKILL it after ``grace`` seconds; the exit
        code (None if it never came)."""
        if self.paused:
            self.resume()
        if self.stdin is not None and not self.stdin.is_closing():
            self.stdin.close()
        self.signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(asyncio.shield(self.exited), grace)
        except asyncio.TimeoutError:
            self.signal(signal.SIGKILL)
        try:
            return await asyncio.wait_for(asyncio.shield(self.exited), grace)
        except asyncio.TimeoutError:
            return None
        finally:
            # children the node left behind in its group
            if self.pid is not None:
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                _LIVE.discard(self.pid)

    async def close(self, grace: float) -> None:
        """Close the transport once the stopped node's stdout has ended (at most
        ``grace`` seconds on): a transport left open when the run's loop closes is
        closed by the garbage collector, which then fails on the closed loop and prints
        "Event loop is closed" after a Ctrl-C."""
        if self.transport is None or self.transport.is_closing():
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._eof), grace)
        except asyncio.TimeoutError:
            pass
        self.transport.close()


async def start_node(argv: list[str], node: str, incarnation: int, log: Path,
                     on_message: Callable[[str, Message], None],
                     on_error: Callable[[str, Exception], None],
                     on_exit: Callable[[str, int, int | None], None],
                     max_line: int = 16 << 20, max_queued: int = 64 << 20,
                     log_stderr: bool = False) -> NodeProcess:
    """Start one incarnation of ``node``; raises OSError when the program cannot run.
    With ``log_stderr`` its stderr is also shown on the harness's stderr."""
    loop = asyncio.get_running_loop()
    log.parent.mkdir(parents=True, exist_ok=True)
    err: IO[bytes] = open(log, "ab")  # noqa: SIM115 - the child (or the pipe) holds it
    create = asyncio.ensure_future(loop.subprocess_exec(
        lambda: NodeProcess(node, incarnation, on_message, on_error, on_exit, max_line,
                            max_queued, err if log_stderr else None),
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE if log_stderr else err, start_new_session=True))
    _STARTING.add(create)
    create.add_done_callback(_STARTING.discard)
    try:
        # shielded: Python 3.11's subprocess_exec, cancelled while it connects the
        # process's pipes, kills the process and then waits for ever for an exit that its
        # transport reports only once every pipe is connected (asyncio.run's close, which
        # cancels the tasks left, hung on it after a Ctrl-C); so a start is never
        # cancelled: it finishes (settle), and a start whose caller went away is ended
        _, proto = await asyncio.shield(create)
    except asyncio.CancelledError:
        create.add_done_callback(lambda f: _end_started(f, err))
        raise
    except BaseException:
        err.close()
        raise
    if not log_stderr:
        err.close()
    return proto  # type: ignore[return-value]


def _end_started(create: asyncio.Future, err: IO[bytes]) -> None:
    """End the process of a start whose caller was cancelled, once it exists."""
    err.close()
    if create.cancelled() or create.exception() is not None:
        return
    transport, proto = create.result()
    proto.kill()
    transport.close()


async def settle() -> list[NodeProcess]:
    """Wait until every node start under way has finished (:func:`start_node`: a start
    is not cancelled); the nodes they started, for the caller to stop."""
    out: list[NodeProcess] = []
    while _STARTING:
        done, _ = await asyncio.wait(set(_STARTING))
        out += [f.result()[1] for f in done if not f.cancelled() and f.exception() is None]
    return out
