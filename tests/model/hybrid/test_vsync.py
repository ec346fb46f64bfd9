"""model/hybrid/vsync.py, the view-synchronous layer under the hybrid protocol (001, Rodrigues,
Fonseca, Verissimo, section 5's vs-multicast): on random schedules of FIFO links with
crashes (a notice Crash(q) only once q's packets reached the process), every process
installs the same sequence of views, and processes that install a view delivered the
same messages in the view before it (view synchrony); a message is delivered at most
once and, by a process that survives, every message of a surviving sender is delivered."""

from __future__ import annotations

import doctest
import random

import pytest

import tomkit.model.hybrid.vsync as vs_mod
from tomkit.model.hybrid.vsync import Flush, NewView, VsDeliver, VsInstall, VsMsg, VsyncLayer


class Net:
    """n layers on FIFO links, driven by a seeded random schedule."""

    def __init__(self, n: int, seed: int) -> None:
        self.n = n
        self.rng = random.Random(seed)
        self.layers = [VsyncLayer(i, n) for i in range(n)]
        self.links: dict[tuple[int, int], list] = {(a, b): [] for a in range(n)
                                                   for b in range(n) if a != b}
        self.crashed: set[int] = set()
        self.noted: list[set[int]] = [set() for _ in range(n)]
        # per process: [(view, [delivered payloads])...]
        self.log: list[list[tuple[int, list]]] = [[(0, [])] for _ in range(n)]
        self.views: list[list[tuple[int, tuple[int, ...]]]] = [[] for _ in range(n)]
        self.count = 0

    def apply(self, i: int, st) -> None:
        for ev in st.events:
            if type(ev) is VsDeliver:
                self.log[i][-1][1].append(ev.payload)
            else:
                assert type(ev) is VsInstall
                self.views[i].append((ev.view, ev.members))
                self.log[i].append((ev.view, []))
        for packet, to in st.sends:
            for j in to:
                if j == i:
                    self.apply(i, self.layers[i].receive(packet))
                else:
                    self.links[(i, j)].append(packet)

    def alive(self) -> list[int]:
        return [p for p in range(self.n) if p not in self.crashed]

    def step(self, crash_budget: list[int]) -> bool:
        moves = []
        live = [k for k, q in self.links.items() if q and k[1] not in self.crashed]
        moves += [("link", k) for k in live]
        moves += [("send", p) for p in self.alive()] * 2
        notes = [(p, q) for p in self.alive() for q in self.crashed
                 if q not in self.noted[p] and not self.links[(q, p)]]
        moves += [("note", x) for x in notes]
        if crash_budget[0] > 0 and len(self.alive()) > 1:
            moves.append(("crash", None))
        if not moves:
            return False
        kind, x = self.rng.choice(moves)
        if kind == "link":
            self.apply(x[1], self.layers[x[1]].receive(self.links[x].pop(0)))
        elif kind == "send":
            self.count += 1
            self.apply(x, self.layers[x].multicast(f"m{self.count}"))
        elif kind == "note":
            p, q = x
            self.noted[p].add(q)
            self.apply(p, self.layers[p].crash(q))
        else:
            crash_budget[0] -= 1
            self.crashed.add(self.rng.choice(self.alive()))
        return True

    def drain(self) -> None:
        for _ in range(10_000):
            busy = False
            for (_a, b), q in self.links.items():
                if q and b not in self.crashed:
                    busy = True
                    self.apply(b, self.layers[b].receive(q.pop(0)))
            for p in self.alive():
                for q in self.crashed:
                    if q not in self.noted[p] and not self.links[(q, p)]:
                        busy = True
                        self.noted[p].add(q)
                        self.apply(p, self.layers[p].crash(q))
            if not busy:
                return
        raise AssertionError("no quiescence")


def test_doctest() -> None:
    assert doctest.testmod(vs_mod).failed == 0


@pytest.mark.parametrize("seed", range(25))
def test_view_synchrony_on_random_schedules(seed: int) -> None:
    n = 3 + seed % 3
    net = Net(n, seed)
    budget = [(n - 1) // 2 + (seed % 2)]
    for _ in range(150):
        if not net.step(budget):
            break
    net.drain()
    survivors = net.alive()
    # the same sequence of views at every survivor, only crashed processes removed
    seqs = {tuple(net.views[p]) for p in survivors}
    assert len(seqs) == 1
    (views,) = seqs
    assert views == tuple(sorted(set(views)))
    if net.crashed:
        assert views and set(views[-1][1]) == set(survivors)
    # processes that install view v + 1 delivered the same messages in view v; a
    # crashed process's prefix is compatible
    for p in range(n):
        for q in range(n):
            for (v, got_p), (w, got_q) in zip(net.log[p], net.log[q]):
                assert v == w
                if p in survivors and q in survivors:
                    assert sorted(got_p) == sorted(got_q), (seed, v)
    # no duplicates; every message of a survivor reaches every survivor
    sent_by_survivors = set()
    for p in survivors:
        got = [m for _, ms in net.log[p] for m in ms]
        assert len(got) == len(set(got))
        sent_by_survivors |= set(got)
    for p in survivors:
        assert {m for _, ms in net.log[p] for m in ms} == sent_by_survivors


def test_sends_wait_during_a_view_change_and_go_out_in_the_new_view() -> None:
    a, b, c = (VsyncLayer(i, 3) for i in range(3))
    st = a.crash(2)  # a flushes and, as coordinator, proposes {0, 1}
    assert [type(p) for p, _ in st.sends] == [Flush, NewView]
    assert a.blocked
    assert a.multicast("late").sends == []  # held
    flush_a, newview = st.sends[0][0], st.sends[1][0]
    assert a.receive(newview).events == []  # b's flush is missing
    st_b = b.receive(flush_a)  # b flushes on a's flush
    assert [type(p) for p, _ in st_b.sends] == [Flush]
    st = a.receive(st_b.sends[0][0])
    # still waiting for Crash(2) at a? no: a knows; it installs and sends "late" in v1
    assert st.events == [VsInstall(1, (0, 1), (2,))]
    (late, to), = st.sends
    assert type(late) is VsMsg and late.view == 1 and to == (0, 1)
    # b gets "late" before it installs: kept until then
    assert b.receive(late).events == []
    # b has no Crash(2) yet, but the coordinator's cut says 2 sent nothing in view 0
    st = b.receive(newview)
    assert st.events == [VsInstall(1, (0, 1), (2,)), VsDeliver(0, "late")]
    assert b.crash(2).events == []  # the notice of a process that left changes nothing
    del c


def test_own_crash_notice_refused() -> None:
    with pytest.raises(ValueError):
        VsyncLayer(0, 2).crash(0)


class GrowingNet:
    """n layers on FIFO links under a seeded random schedule with crashes, joins of
    processes outside from the start, and recoveries (a new incarnation). The layer above
    is a log of deliveries; its state transfer is the set of messages delivered so far."""

    def __init__(self, n: int, spares: int, seed: int) -> None:
        self.n = n
        self.rng = random.Random(seed)
        first = range(n - spares)
        self.layers = [VsyncLayer(i, n, members=first) if i < n - spares
                       else VsyncLayer(i, n, outside=True) for i in range(n)]
        self.outside = set(range(n - spares, n))
        self.links: dict[tuple[int, int], list] = {(a, b): [] for a in range(n)
                                                   for b in range(n) if a != b}
        self.crashed: set[int] = set()
        self.noted: list[set[int]] = [set() for _ in range(n)]
        #: per incarnation (process, k): its views [(view, members, [deliveries])]
        self.life = [0] * n
        self.views: dict[tuple[int, int], list[tuple[int, tuple[int, ...], list]]] = {
            (i, 0): [(0, tuple(first), [])] for i in first}
        self.had: dict[tuple[int, int], set] = {(i, 0): set() for i in first}
        self.count = 0

    def me(self, i: int) -> tuple[int, int]:
        return (i, self.life[i])

    def apply(self, i: int, st) -> None:
        sends = list(st.sends)
        for ev in st.events:
            if type(ev) is VsDeliver:
                assert ev.payload not in self.had[self.me(i)], "delivered twice"
                self.had[self.me(i)].add(ev.payload)
                self.views[self.me(i)][-1][2].append(ev.payload)
                continue
            assert type(ev) is VsInstall
            if ev.state is not None:  # a joiner's first view
                self.had[self.me(i)] = set(ev.state)
                self.views[self.me(i)] = []
            else:
                sends += self.layers[i].state(ev, frozenset(self.had[self.me(i)])).sends
            self.views[self.me(i)].append((ev.view, ev.members, []))
        for packet, to in sends:
            for j in to:
                if j == i:
                    self.apply(i, self.layers[i].receive(packet))
                else:
                    self.links[(i, j)].append(packet)

    def up(self) -> list[int]:
        return [p for p in range(self.n) if p not in self.crashed and p not in self.outside]

    def start(self, j: int, recover: bool) -> None:
        """j joins (or, crashed, restarts as a new incarnation) and asks to join."""
        if recover:
            self.crashed.discard(j)
            self.life[j] += 1
            for a in range(self.n):  # what was on its way to it is lost
                if a != j:
                    self.links[(a, j)].clear()
                self.noted[a].discard(j)
            self.noted[j] = set()
        self.outside.discard(j)
        self.layers[j] = VsyncLayer(j, self.n, outside=True, incarnation=self.life[j])
        self.had[self.me(j)] = set()
        self.views[self.me(j)] = []
        self.apply(j, self.layers[j].join())

    def step(self, budget: list[int]) -> bool:
        moves = []
        live = [k for k, q in self.links.items() if q and k[1] in self.up()]
        moves += [("link", k) for k in live] * 2
        moves += [("send", p) for p in self.up()]
        notes = [(p, q) for p in self.up() for q in self.crashed
                 if q not in self.noted[p] and not self.links[(q, p)]]
        moves += [("note", x) for x in notes]
        installed = [p for p in self.up() if self.layers[p].installed]
        if budget[0] > 0 and len(installed) > 1:
            moves.append(("crash", None))
        if budget[1] > 0 and (self.outside or self.crashed):
            moves.append(("start", None))
        if not moves:
            return False
        kind, x = self.rng.choice(moves)
        if kind == "link":
            self.apply(x[1], self.layers[x[1]].receive(self.links[x].pop(0)))
        elif kind == "send":
            self.count += 1
            self.apply(x, self.layers[x].multicast(f"m{self.count}"))
        elif kind == "note":
            p, q = x
            self.noted[p].add(q)
            self.apply(p, self.layers[p].crash(q))
        elif kind == "crash":
            budget[0] -= 1
            self.crashed.add(self.rng.choice(installed))
        else:
            budget[1] -= 1
            j = self.rng.choice(sorted(self.outside | self.crashed))
            self.start(j, j in self.crashed)
        return True

    def drain(self) -> None:
        for _ in range(10_000):
            busy = False
            for (_a, b), q in self.links.items():
                if q and b in self.up():
                    busy = True
                    self.apply(b, self.layers[b].receive(q.pop(0)))
            for p in self.up():
                for q in self.crashed:
                    if q not in self.noted[p] and not self.links[(q, p)]:
                        busy = True
                        self.noted[p].add(q)
                        self.apply(p, self.layers[p].crash(q))
            if not busy:
                return
        raise AssertionError("no quiescence")


@pytest.mark.parametrize("seed", range(60))
def test_views_grow_with_joins_and_recoveries(seed: int) -> None:
    """One sequence of views for every incarnation (each installs a stretch of it), one
    member set per view id, the same messages delivered in each view by the incarnations
    that install the next one, and at the end every process up and in the group has
    installed the last view and holds the same messages, transferred ones included."""
    n = 4 + seed % 3
    spares = 1 + seed % 2
    net = GrowingNet(n, spares, seed)
    budget = [1 + seed % 2, 2 + seed % 3]  # crashes, starts (joins and recoveries)
    for _ in range(250):
        if not net.step(budget):
            break
    net.drain()
    members: dict[int, tuple[int, ...]] = {}
    nxt: dict[int, int] = {}
    for life, views in net.views.items():
        for (v, _, _), (w, _, _) in zip(views, views[1:]):
            assert nxt.setdefault(v, w) == w and w == v + 1, (seed, life)
        for v, mem, _ in views:
            assert members.setdefault(v, mem) == mem, (seed, v)
            assert life[0] in mem
    by_view: dict[int, set] = {}
    for views in net.views.values():
        for (v, _, got), _next in zip(views, views[1:]):
            assert by_view.setdefault(v, set(got)) == set(got), (seed, v)
    up = [p for p in net.up() if net.layers[p].installed]
    assert up, seed
    last = max(members)
    final = {frozenset(net.had[net.me(p)]) for p in up}
    assert {net.layers[p].view for p in up} == {last}, seed
    assert set(members[last]) == set(net.up()), seed
    assert len(final) == 1, seed
    # a joiner's transferred state is what the members delivered before its first view
    for (p, k), views in net.views.items():
        if views and views[0][0] > 0 and (p, k) in net.had:
            before = set().union(*(set(g) for v, g in by_view.items() if v < views[0][0]))
            assert before <= net.had[(p, k)], seed
