"""The recorders' network namespaces (tomkit/record/netns.py): the hub reaches every
server, a partition cuts one server off from the others both ways and not from the hub,
heal restores it, and every namespace and process is gone at the end, after an error,
after Ctrl-C, and (by the next recorder) after the recorder was killed outright."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from tomkit.record import netns
from tomkit.record.netns import Network

pytestmark = pytest.mark.skipif(netns.available() is not None,
                                reason=f"no network namespaces here: {netns.available()}")

#: a server of the test: answers every TCP connection on its address, port 7000
ECHO = ("import socket,sys\ns=socket.socket(); s.setsockopt(socket.SOL_SOCKET, "
        "socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 7000)); s.listen()\n"
        "while True:\n    c, _ = s.accept(); c.sendall(b'hi'); c.close()\n")


def _reach(net: Network, frm: str, to: str, timeout: float = 10) -> bool:
    """Whether a connection from server ``frm``'s namespace to ``to`` is answered within
    ``timeout`` (generous where it must be: a loaded machine; a cut drops the SYN, so
    a short wait suffices to see that nothing comes back)."""
    probe = (f"import socket; c = socket.create_connection(('{net.address(to)}', 7000), "
             f"timeout={timeout}); print(c.recv(2).decode())")
    r = subprocess.run(net.argv(frm, [sys.executable, "-c", probe]), capture_output=True,
                       text=True, timeout=60)
    return r.stdout.strip() == "hi"


def _hub_reaches(net: Network, to: str) -> bool:
    with net.clients():
        try:
            with socket.create_connection((net.address(to), 7000), timeout=5) as c:
                return c.recv(2) == b"hi"
        except OSError:
            return False


def _until(cond, seconds: float = 60) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return False


def test_partition_cuts_one_server_from_the_others_not_from_the_hub():
    net = Network(["a", "b", "c"])
    servers = []
    try:
        net.up()
        for s in net.servers:
            servers.append(subprocess.Popen(net.argv(s, [sys.executable, "-c", ECHO,
                                                         net.address(s)])))
        assert _until(lambda: all(_hub_reaches(net, s) for s in net.servers))
        assert _reach(net, "a", "b") and _reach(net, "c", "b")
        net.isolate("b")
        assert net.cut == {"b"} and net.links("b") == 2
        assert not _reach(net, "a", "b", 1.5) and not _reach(net, "b", "c", 1.5)
        assert _reach(net, "a", "c")  # the majority still talks
        assert _hub_reaches(net, "b")  # the clients still reach the cut-off server
        net.heal("b")
        assert net.cut == set() and net.links("b") == 0
        assert _reach(net, "a", "b") and _reach(net, "b", "c")
    finally:
        for p in servers:
            p.kill()
            p.wait()
        net.down()
    assert not [n for n in netns.ours() if n.startswith(net.prefix)]


def test_the_calling_thread_returns_to_its_namespace():
    before = os.readlink("/proc/thread-self/ns/net")
    net = Network(["a"])
    try:
        net.up()
        with net.clients():
            assert os.readlink("/proc/thread-self/ns/net") != before
        with pytest.raises(ZeroDivisionError), net.clients():
            raise ZeroDivisionError("the run failed")
        assert os.readlink("/proc/thread-self/ns/net") == before
    finally:
        net.down()


#: a recorder stand-in: makes the namespaces, starts a server in each, prints "up", and
#: waits; it deletes everything in its ``finally``, as the recorders do
HOLDER = """
import subprocess, sys, time
from tomkit.record.log import die_with_parent
from tomkit.record.netns import Network
net = Network(["a", "b"])
procs = []
try:
    net.up()
    for s in net.servers:
        procs.append(subprocess.Popen(net.argv(s, ["sleep", "600"]),
                                      preexec_fn=die_with_parent))
    print(net.prefix, *(p.pid for p in procs), flush=True)
    time.sleep(600)
finally:
    for p in procs:
        p.kill()
        p.wait()
    net.down()
"""


def _holder() -> tuple[subprocess.Popen, str, list[int]]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True)
    prefix, *pids = proc.stdout.readline().split()
    assert prefix == f"tomkit-{proc.pid}"
    assert len([n for n in netns.ours() if n.startswith(prefix + "-")]) == 3
    return proc, prefix, [int(p) for p in pids]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie until reaped by init is gone as far as the system is concerned
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] == "Z"


@pytest.mark.parametrize("how", ["ctrl-c", "sigkill"])
def test_nothing_is_left_behind(how):
    proc, prefix, pids = _holder()
    proc.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
    proc.wait(timeout=60)
    assert _until(lambda: all(_gone(p) for p in pids))
    if how == "sigkill":  # no finally ran: the next recorder deletes what was left
        # (or another recorder on this machine already has)
        netns.remove_stale()
    assert not [n for n in netns.ours() if n.startswith(prefix + "-")]
