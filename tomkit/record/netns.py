"""Network namespaces for a recorded cluster: one per server, a hub that joins them, and
partitions made and healed inside them.

Each server ``s`` runs in a namespace of its own, ``tomkit-<pid>-<s>``, with one address
``10.215.0.<i>/24`` on a veth whose other end sits on a bridge in a hub namespace
``tomkit-<pid>-hub``; the bridge has the address ``10.215.0.254``, where the recorder's
own clients live (:meth:`Network.clients`: the recording thread, and every thread it
starts, enters the hub). Nothing is configured outside these namespaces: the host's
interfaces, routes and firewall are not touched, and the addresses exist only inside.

A partition of one member (:meth:`Network.isolate`) adds blackhole routes, in the
member's namespace for the other servers' addresses and in theirs for its address, so
that no packet passes between it and the others in either direction, while the clients
in the hub still reach every server: the cut is between the servers, as in Jepsen's
``partition-random-node`` (its nemesis drops traffic between database nodes, not from
the control node), so a client attached to the cut-off server stays on the minority
side. :meth:`Network.heal` removes the routes; established connections resume, if the
servers kept them, once their retransmissions pass again.

The recorder deletes every namespace at the end (:meth:`Network.down`: deleting a
namespace deletes the veth ends in it, and the peer with it), on an error and on
Ctrl-C (a ``finally``); its servers die with it (``PR_SET_PDEATHSIG``), and namespaces
that a recorder killed outright (SIGKILL) left behind are deleted by the next one
(:func:`remove_stale`), which knows them by the dead recorder's pid in their name.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import subprocess
from collections.abc import Iterator

__all__ = ["Network", "available", "remove_stale", "SUBNET"]

SUBNET = "10.215.0"
HUB_HOST = 254
_CLONE_NEWNET = 0x40000000


def _run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=20)


def available() -> str | None:
    """None if this machine lets the recorder make namespaces; else why not."""
    if shutil.which("ip") is None:
        return "ip is not installed (Debian: apt-get install iproute2)"
    probe = f"tomkit-{os.getpid()}-probe"
    r = _run("ip", "netns", "add", probe)
    if r.returncode != 0:
        return f"network namespaces are not permitted: ip netns add: {r.stderr.strip()}"
    _run("ip", "netns", "del", probe)
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def ours() -> list[str]:
    """The namespaces named like a recorder's (``tomkit-<pid>-<name>``)."""
    names = []
    for line in _run("ip", "netns", "list").stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        parts = name.split("-", 2)
        if len(parts) == 3 and parts[0] == "tomkit" and parts[1].isdigit():
            names.append(name)
    return names


def remove_stale() -> list[str]:
    """Delete namespaces left by recorders that died (their pid is gone)."""
    gone = []
    for name in ours():
        if not _alive(int(name.split("-")[1])):
            _run("ip", "netns", "del", name)
            gone.append(name)
    return gone


def _setns(fd: int) -> None:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    if libc.setns(fd, _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


class Network:
    """The hub and one namespace per server (module docstring). ``up`` makes them,
    ``down`` deletes them; both are safe to call after a partial ``up``."""

    def __init__(self, servers: list[str]):
        if len(servers) >= HUB_HOST - 1:
            raise ValueError(f"at most {HUB_HOST - 2} servers in one network")
        self.prefix = f"tomkit-{os.getpid()}"
        self.hub = f"{self.prefix}-hub"
        self.servers = list(servers)
        self.namespaces = {s: f"{self.prefix}-{s}" for s in servers}
        self.cut: set[str] = set()
        self._made: list[str] = []

    def address(self, server: str) -> str:
        """The server's address, inside its namespace (and reachable from the hub)."""
        return f"{SUBNET}.{self.servers.index(server) + 1}"

    @property
    def client_address(self) -> str:
        return f"{SUBNET}.{HUB_HOST}"

    def _must(self, *cmd: str) -> None:
        r = _run(*cmd)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")

    def _add(self, ns: str) -> None:
        self._must("ip", "netns", "add", ns)
        self._made.append(ns)

    def up(self) -> None:
        remove_stale()
        self._add(self.hub)
        self._must("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
        self._must("ip", "-n", self.hub, "addr", "add", f"{self.client_address}/24", "dev",
                   "br0")
        self._must("ip", "-n", self.hub, "link", "set", "br0", "up")
        self._must("ip", "-n", self.hub, "link", "set", "lo", "up")
        for i, s in enumerate(self.servers, 1):
            ns = self.namespaces[s]
            self._add(ns)
            self._must("ip", "-n", self.hub, "link", "add", f"v{i}", "type", "veth",
                       "peer", "name", "eth0", "netns", ns)
            self._must("ip", "-n", self.hub, "link", "set", f"v{i}", "master", "br0", "up")
            self._must("ip", "-n", ns, "addr", "add", f"{self.address(s)}/24", "dev", "eth0")
            self._must("ip", "-n", ns, "link", "set", "eth0", "up")
            self._must("ip", "-n", ns, "link", "set", "lo", "up")

    def down(self) -> None:
        for ns in reversed(self._made):
            _run("ip", "netns", "del", ns)
        self._made.clear()
        self.cut.clear()

    def argv(self, server: str, argv: list[str]) -> list[str]:
        """``argv`` run inside the server's namespace (``ip netns exec`` execs it, so the
        pid is the program's own)."""
        return ["ip", "netns", "exec", self.namespaces[server], *argv]

    @contextlib.contextmanager
    def clients(self) -> Iterator[None]:
        """The calling thread enters the hub (and every thread it starts inside, which
        inherits its namespace); it returns to its own namespace at the end."""
        with open("/proc/thread-self/ns/net") as home, \
                open(f"/run/netns/{self.hub}") as hub:
            _setns(hub.fileno())
            try:
                yield
            finally:
                _setns(home.fileno())

    def _routes(self, server: str, op: str) -> None:
        others = [s for s in self.servers if s != server]
        for o in others:
            for ns, dst in ((self.namespaces[server], self.address(o)),
                            (self.namespaces[o], self.address(server))):
                r = _run("ip", "-n", ns, "route", op, "blackhole", f"{dst}/32")
                if r.returncode != 0 and op == "add":
                    raise RuntimeError(f"ip -n {ns} route add blackhole {dst}/32: "
                                       f"{r.stderr.strip()}")

    def isolate(self, server: str) -> None:
        """Cut the server off from the other servers, both ways (clients unaffected)."""
        self._routes(server, "add")
        self.cut.add(server)

    def heal(self, server: str) -> None:
        self._routes(server, "del")
        self.cut.discard(server)

    def links(self, server: str) -> int:
        """Blackhole routes in the server's namespace now (for tests and checks)."""
        r = _run("ip", "-n", self.namespaces[server], "route", "show", "type", "blackhole")
        return len(r.stdout.splitlines())
