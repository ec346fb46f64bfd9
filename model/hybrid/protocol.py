"""The hybrid protocol's three configurations as protocols of the one process interface
(``model/process.py``): ``hybrid``, ``token-site`` and ``symmetric``, one machine
(``model/hybrid/process.py``) with different options (001, Rodrigues, Fonseca, Verissimo,
section 4.2: the token-site protocol is the hybrid with one active process, the
symmetric one the hybrid with all processes active).

Membership events: crash, join and recover (``model/events.py``): a process outside
the first view joins, a crashed one restarts as a new incarnation and rejoins, through
the view-synchronous layer's view changes with state transfer (docs/hybrid.md).
``tomkit conform`` replays them (:func:`replay`): the join request at its logged time,
the state transfer as the packets the joiner received.

Options (stable: the figures scripts build on them)
---------------------------------------------------
``roles``
    "auto" (Figure 2's heuristic when ``delays`` are given, else every process active,
    section 5.1's initial configuration), "all", or the active processes' indices,
    comma-separated ("0" or "0,3"). Defaults: token-site "0", symmetric "all", hybrid
    "auto". A passive process's first sequencer is its closest active process.
``delays``
    the mean one-way delay D(i,j) in seconds, an n x n matrix (JSON text on the command
    line, any nested sequence from Python); used by Figure 2 and to pick the closest
    active process before estimates exist. None: all equal (lowest id wins).
``rates``
    each process's mean sending rate, messages per second (comma-separated; default the
    run's rate): Figure 2's t_n = 1 / rate, and the default heartbeat.
``tick_rate``
    ticket numbers per second of the rate synchronisation (0: Lamport's rule).
``clock_skew``, ``clock_drift``
    each process's own clock (``model/net/clocks.py``): offsets drawn within +-skew/2 (two
    clocks differ by at most the skew), rates within 1 +- drift, from the run's seed; the
    rate synchronisation, heartbeats, probes and the logged ``time`` read it, and every
    record carries ``real_time``. 0 and 0 (the default): every clock reads real time.
``heartbeat``
    seconds an active process with unsent tickets or an unmatched ticket number waits
    before a null message (decision A4). Default: 0 for token-site (tickets at once),
    else the process's mean inter-message time 1 / rate.
``dynamic``, ``probe_interval``, ``mean_shift_k``, ``hysteresis``
    section 6's online switching (hybrid only): probes every ``probe_interval`` s, the
    mean-shift detector's k, the 20 % threshold.
``switches``
    scripted role changes per process, one per timer (for the fuzzer: goingToPassive,
    goingToActive, change of sequencer, at times the fuzzer picks).
``variant``
    a literal reading of Figure 4 that breaks a property (``model/hybrid/process.py``).
``control_records``
    log every packet, crash notice and timer as a ``recv`` record (what ``tomkit
    conform`` replays); off for long simulations.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from tomkit.model.hybrid.process import VARIANTS, HybridProcess
from tomkit.model.hybrid.switch import assign_modes, closest
from tomkit.model.hybrid.wire import ACTIVE, PASSIVE, At, decode
from tomkit.model.process import (
    Crash,
    MemberEvent,
    Option,
    Protocol,
    Receive,
    Replayed,
    ReplayError,
    Timer,
)
from tomkit.model.process import Send as SendInput

from ..net.clocks import ClockBounds

__all__ = ["PROFILE", "incarnation", "initial_roles", "make", "protocols", "replay",
           "replay_for"]

#: what every run must satisfy (docs/hybrid.md says why, and what is not promised):
#: checker/profiles/model-hybrid.toml
PROFILE = "model-hybrid"

CONFIGS = {
    "hybrid": ("the dynamic hybrid token-site/symmetric protocol (Rodrigues, Fonseca, "
               "Verissimo; 001 sections 4-6)", "auto"),
    "token-site": ("the token-site baseline: p0 orders every message (001 section 4.2; "
                   "the hybrid with one active process)", "0"),
    "symmetric": ("the rate-synchronised symmetric baseline (001 section 4.2; the hybrid "
                  "with every process active)", "all"),
}


def _matrix(text: str) -> list[list[float]]:
    try:
        m = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"--delays: not a JSON matrix: {e}") from None
    return [[float(x) for x in row] for row in m]


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def _options(config: str) -> tuple[Option, ...]:
    opts = [
        Option("roles", str, CONFIGS[config][1], "'auto' (Figure 2 on --delays and "
               "--rates, else all active), 'all', or the active processes' indices, "
               "comma-separated"),
        Option("delays", _matrix, None, "mean one-way delays D(i,j) in seconds, an n x n "
               "JSON matrix (Figure 2, and the closest active process)"),
        Option("rates", _floats, None, "each process's sending rate (msg/s), comma-"
               "separated; default the run's rate"),
        Option("tick_rate", float, 1000.0, "ticket numbers per second of the rate "
               "synchronisation (0: Lamport's rule)"),
        Option("clock_skew", float, 0.0, "seconds two processes' clocks may differ at "
               "time 0 (offsets within +-skew/2, drawn from the seed; 0: real time)"),
        Option("clock_drift", float, 0.0, "each clock's rate error bound rho (rate within "
               "1 +- rho, drawn from the seed)"),
        Option("heartbeat", float, None, "seconds before an active process sends a null "
               "message with its unsent tickets (default: 0 for token-site, else 1/rate)"),
        Option("switches", int, 0, "scripted role changes per process, one per timer (for "
               "fuzzing)"),
        Option("variant", str, None, "a literal reading of Figure 4 that breaks a "
               "property: " + "; ".join(f"{k}: {v}" for k, v in VARIANTS.items()),
               choices=tuple(VARIANTS)),
        Option("control_records", bool, True, "log every packet, crash notice and timer "
               "as a recv record (what 'tomkit conform' replays)"),
    ]
    if config == "hybrid":
        opts[7:7] = [
            Option("dynamic", bool, False, "section 6's online switching (estimates, "
                   "mean-shift detector, 20%% hysteresis)"),
            Option("probe_interval", float, 2.0, "seconds between round-trip probes"),
            Option("mean_shift_k", int, 5, "samples per run of the mean-shift detector"),
            Option("hysteresis", float, 0.2, "switching threshold, a fraction of the "
                   "delay"),
        ]
    return tuple(opts)


def initial_roles(spec: str, n: int, delays: Sequence[Sequence[float]] | None,
                  gaps: Sequence[float]) -> tuple[list[str], list[int]]:
    """Roles and first sequencers from the ``roles`` option (module docstring)."""
    if spec == "auto":
        if delays is not None:
            modes, seqs = assign_modes(delays, gaps)
            return list(modes), list(seqs)
        spec = "all"
    if spec == "all":
        return [ACTIVE] * n, list(range(n))
    try:
        act = sorted({int(x) for x in spec.split(",") if x.strip()})
    except ValueError:
        raise ValueError(f"--roles: 'auto', 'all' or indices, not {spec!r}") from None
    if not act or not all(0 <= a < n for a in act):
        raise ValueError(f"--roles: active indices must be in 0..{n - 1}, got {spec!r}")
    roles = [ACTIVE if i in act else PASSIVE for i in range(n)]
    D = delays if delays is not None else [[0.0] * n for _ in range(n)]  # noqa: N806
    seqs = [i if roles[i] == ACTIVE else closest(i, act, D) for i in range(n)]
    return roles, seqs


def make(config: str):
    def make_processes(names: Sequence[str], opts: Mapping[str, Any],
                       rate: float) -> list[HybridProcess]:
        n = len(names)
        rates = opts.get("rates")
        rates = [float(rate)] * n if rates is None else [float(r) for r in rates]
        if len(rates) != n or not all(r > 0 for r in rates):
            raise ValueError(f"--rates: {n} positive rates needed, got {rates}")
        gaps = [1.0 / r for r in rates]
        delays = opts.get("delays")
        if delays is not None:
            delays = [[float(x) for x in row] for row in delays]
            if len(delays) != n or any(len(row) != n for row in delays):
                raise ValueError(f"--delays: an {n} x {n} matrix needed")
        roles, seqs = initial_roles(str(opts.get("roles") or CONFIGS[config][1]), n,
                                    delays, gaps)
        hb = opts.get("heartbeat")
        dynamic = bool(opts.get("dynamic", False))
        group = set(range(n))  # the first view; start_outside takes a joiner out of it
        procs = []
        for i in range(n):
            beat = hb if hb is not None else (0.0 if config == "token-site" else gaps[i])
            procs.append(HybridProcess(
                i, names, roles, seqs, tick_rate=float(opts.get("tick_rate", 1000.0)),
                heartbeat=beat, delays=delays, dynamic=dynamic,
                probe_interval=float(opts.get("probe_interval", 2.0)),
                mean_shift_k=int(opts.get("mean_shift_k", 5)),
                hysteresis=float(opts.get("hysteresis", 0.2)),
                switches=int(opts.get("switches", 0)), variant=opts.get("variant"),
                control_records=bool(opts.get("control_records", True)), group=group))
        return procs

    return make_processes


def replay_for(config: str):
    """The replay of one configuration: a trace with timers needs the run's heartbeat,
    which is 1/rate by default (not for token-site), and a trace does not say the run's
    rate: without ``rates`` or ``heartbeat`` the model would set other timers than the
    run did and differ for that reason alone, so the replay refuses it."""
    def replay_config(records: Sequence[Mapping], names: Sequence[str],
                      opts: Mapping[str, Any]) -> dict[str, list[Replayed]]:
        if (config != "token-site" and opts.get("rates") is None
                and opts.get("heartbeat") is None):
            timer = next((r for r in records if r.get("x_packet") == "timer"), None)
            if timer is not None:
                raise ReplayError(f"{timer['process']}: record {timer['msg']}: the trace "
                                  "logs timers, and the heartbeat is 1/rate by default: "
                                  "give the run's --rates (or --heartbeat) to replay it")
        return replay(records, names, opts)

    return replay_config


def replay(records: Sequence[Mapping], names: Sequence[str],
           opts: Mapping[str, Any]) -> dict[str, list[Replayed]]:
    """Each process's inputs, in its log's order, each with its logged time (``At``):
    its sends, every packet it received (``x_wire``), its crash notices and its timers.
    The trace must carry the control records (``control_records``, the default).

    ``names`` is the group; the inputs are keyed by the trace's process names, a
    restarted process's incarnations (``p1~2``) apart (``Protocol.incarnations``). A
    join is replayed as the model runs it: a process whose first incarnation joins was
    outside the group from time 0 (``MemberEvent("outside")``, which the replayer gives
    before any process starts); its ``join`` record, written when the view that admits
    it is installed, carries the request's local time ``x_requested``, and the request
    (``join``, or ``recover`` for a later incarnation) is given before the first of that
    incarnation's records logged at or after it: the JOIN it sends, then the NEWVIEW and
    the STATE packets it receives (``recv`` records with ``x_wire``) are the state
    transfer, replayed like any packet."""
    at = {p: i for i, p in enumerate(names)}
    out: dict[str, list[Replayed]] = {}
    pos: dict[str, int] = {}
    joined: set[str] = set()
    for r in records:
        p = r["process"]
        i = pos.get(p, 0)
        pos[p] = i + 1
        mine = out.setdefault(p, [])
        kind = r["kind"]
        t = float(r.get("time", i))
        if kind == "join":
            req = r.get("x_requested")
            if isinstance(req, bool) or not isinstance(req, (int, float)):
                raise ReplayError(f"{p}: record {i} (join): field x_requested: the join "
                                  "request's local time is needed to replay it (the join "
                                  "record is written when the view admitting it is "
                                  "installed)")
            if p in joined:
                raise ReplayError(f"{p}: record {i} (join): a second join of one "
                                  "incarnation (a restart is a new incarnation, NAME~k)")
            joined.add(p)
            later = incarnation(p)[1] > 1
            k = next((k for k, x in enumerate(mine) if x.input.packet.time >= req),
                     len(mine))
            event = MemberEvent("recover" if later else "join")
            mine.insert(k, Replayed(i, Receive(At(float(req), event)), False))
            if not later:
                mine.insert(0, Replayed(i, MemberEvent("outside"), False))
            continue
        try:
            if kind == "send":
                inp: Any = SendInput(r["msg"])
            elif kind == "recv":
                packet = r.get("x_packet")
                if packet is None:
                    raise ReplayError(f"{p}: record {i} ({r['msg']}): no x_packet: the "
                                      "hybrid protocol replays only traces with control "
                                      "records (simulate with control_records)")
                if packet == "crash-notice":
                    inp = Crash(at[r["x_of"]])
                elif packet == "timer":
                    inp = Timer()
                else:
                    inp = Receive(decode(r["x_wire"]))
            else:
                continue
        except (KeyError, ValueError) as e:
            if isinstance(e, ReplayError):
                raise
            raise ReplayError(f"{p}: record {i} ({r.get('msg', '')}): {e}") from None
        mine.append(Replayed(i, Receive(At(t, inp))))
    return out


def incarnation(name: str) -> tuple[str, int]:
    """``p1~2`` -> ("p1", 2), ``p1`` -> ("p1", 1): a restarted process's trace name
    (``HybridProcess._named``, as model/toto/membership.py names them)."""
    base, sep, k = name.rpartition("~")
    return (base, int(k)) if sep and k.isdigit() and base else (name, 1)


def summary(procs: Sequence[HybridProcess], records: Sequence[Mapping],
            stats: dict) -> dict:
    """nulls (null messages), reassigns, role_changes, aborts (goingToPassive of the
    last active process), actives (at the end), max_delivery_latency mean (001 section
    3's metric: per message, the latest delivery minus the send)."""
    sent: dict[str, float] = {}
    last: dict[str, float] = {}
    for r in records:  # in real time when the processes have clocks of their own
        if r["kind"] == "send":
            sent[r["msg"]] = r.get("real_time", r["time"])
        elif r["kind"] == "deliver":
            last[r["msg"]] = max(last.get(r["msg"], -math.inf),
                                 r.get("real_time", r["time"]))
    lat = [last[m] - sent[m] for m in last if m in sent]
    stats.update({
        "nulls": sum(p.nulls for p in procs),
        "reassigns": sum(p.reassigns for p in procs),
        "role_changes": sum(p.role_changes for p in procs),
        "aborts": sum(p.aborts for p in procs),
        "actives": sum(p.role[p.index] == ACTIVE for p in procs),
        "mean_max_latency": sum(lat) / len(lat) if lat else math.nan,
    })
    return stats


def describe(stats: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
    return [f"sent {stats['sends']} messages, {stats['deliveries']} deliveries, "
            f"{stats['undelivered']} undelivered; {stats['nulls']} null messages, "
            f"{stats['reassigns']} reassigns, {stats['role_changes']} role changes "
            f"({stats['aborts']} aborted)",
            f"mean latency {stats['mean_latency'] * 1000:.3f} ms; mean of each message's "
            f"latest delivery {stats['mean_max_latency'] * 1000:.3f} ms (001 section 3)"]


def clocks(opts: Mapping[str, Any]) -> ClockBounds:
    """The processes' clocks the options ask for (``clock_skew``, ``clock_drift``)."""
    return ClockBounds(float(opts.get("clock_skew") or 0.0),
                       float(opts.get("clock_drift") or 0.0))


def protocols() -> list[Protocol]:
    """hybrid, token-site, symmetric: one machine, three configurations."""
    return [Protocol(name=name, title=title, make=make(name), options=_options(name),
                     fifo=True, lossy=False, crashes=True, events=frozenset({"join", "recover"}),
                     profile=PROFILE, live=True, incarnations=incarnation,
                     replay=replay_for(name), summary=summary, describe=describe, variants=VARIANTS,
                     clocks=clocks)
            for name, (title, _) in CONFIGS.items()]
