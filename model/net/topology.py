"""001's network: a delay distribution per sender-recipient pair, LAN and WAN parameters,
and the two-LAN topology of its Figure 3.

Source: Rodrigues, Fonseca, Verissimo (paper 001) section 3: "Messages are delivered by
the multicast layer with a delay that is a function of network delay D(s,r) between the
sender s and the recipient r [...] a probability distribution function, with a mean value
of mu(s,r), and a variance of sigma^2(s,r) [...] the distribution function depends on the
type of network being used to interconnect each sender-recipient pair. [...] a local area
network, with small values of mu and sigma^2 (20ms and 0.05, respectively) and a wide area
network, with large values of mu and sigma^2 (500ms and 0.3-0.5, respectively). A shifted
chi^2 distribution function was used to model both networks"; section 4.4: processes A, B,
C (and D, E) "are within D1 of each other; however, the distance between a process in the
first group and a process in the second group is D1 + D2", D1 = 20 ms, D2 = 500 ms.

Decisions (ours; the paper does not say more)
---------------------------------------------
* A shifted, scaled chi^2 with k degrees of freedom *is* the project's shifted gamma
  (``network.Delay("gamma", ...)``) with shape k/2: c * chi^2_k ~ Gamma(k/2, 2c); the
  shift defaults to half the mean, as in ``network.Delay``.
* The units of the variances are not printed. Two readings (``reading``):
  - ``"cv2"``, ``network.Delay``'s: relative to the squared mean. 001's LAN (0.05) is then
    exactly a shifted chi^2 with 10 degrees of freedom (:func:`chi2_dof`), a WAN with 0.5
    one with 1: a standard deviation of 274-354 ms on a 500 ms WAN.
  - ``"ms2"``: in ms^2, beside means in ms: standard deviations of 0.22 ms (LAN) and
    0.55-0.71 ms (WAN).
  The figures use ``"ms2"`` (ours). Section 3 says "process m will receive it, on average,
  at real-time t + mu(s,m)", and the channels are FIFO (enforced by sequence numbers,
  i.e. a message waits for its predecessors). At 100 msg/s the cv2 reading's WAN tail
  makes the FIFO wait dominate: a WAN message is received about a second after it is sent
  on average, not 500 ms (measured: bench/hybrid_figures.py prints Figure 3 under both),
  and Figure 3's hybrid line is no longer "almost flat". The ms2 reading keeps the
  section 3 sentence true. WAN variance: the range's middle, 0.4 (ms^2) or its low end
  0.3 (cv2; :data:`WAN_CV2`).
* "D1 + D2" between the groups is a path: a LAN leg of D1 then a WAN leg of D2. Its one
  distribution per pair (:func:`series`) has the sum of the shifts, the sum of the means
  and the sum of the variances of the two legs (independent legs), i.e. a shifted gamma
  matching the path's first two moments; it stays a shifted chi^2, with fractional degrees
  of freedom.

Process i of a simulation is ``Topology.labels[i]`` (001's A .. E are p0 .. p4).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tomkit.model.net.links import DELAYS, Delay

__all__ = ["LAN_CV2", "LAN_MEAN", "LAN_VAR_MS2", "READINGS", "TOPOLOGY_PRESETS",
           "Topology", "TopologyError", "WAN_CV2", "WAN_MEAN", "WAN_VAR_MS2", "absolute",
           "chi2_dof", "fig3_topology", "lan", "read_topology", "series", "topology_preset",
           "wan"]

#: 001 section 3: LAN mean 20 ms, variance 0.05 (read as cv2)
LAN_MEAN, LAN_CV2 = 0.020, 0.05
#: 001 section 3: WAN mean 500 ms, variance 0.3-0.5 (cv2; 0.3 is ours, module docstring)
WAN_MEAN, WAN_CV2 = 0.500, 0.3
#: the same variances read in ms^2 (the figures' reading; WAN 0.4 ours)
LAN_VAR_MS2, WAN_VAR_MS2 = 0.05, 0.4
READINGS = ("cv2", "ms2")


def absolute(mean: float, var_ms2: float) -> Delay:
    """A shifted chi^2 (gamma) of mean ``mean`` seconds and variance ``var_ms2`` ms^2 (the
    "ms2" reading, module docstring)."""
    return Delay("gamma", mean, cv2=var_ms2 * 1e-6 / mean ** 2)


class TopologyError(ValueError):
    """A topology file or description that cannot be used (names file, line, field)."""


def lan(mean: float = LAN_MEAN, cv2: float = LAN_CV2) -> Delay:
    """001's LAN link: a shifted chi^2 (gamma) of mean 20 ms and cv2 0.05."""
    return Delay("gamma", mean, cv2=cv2)


def wan(mean: float = WAN_MEAN, cv2: float = WAN_CV2) -> Delay:
    """001's WAN link: a shifted chi^2 (gamma) of mean 500 ms and cv2 in 0.3-0.5."""
    return Delay("gamma", mean, cv2=cv2)


def _shift(d: Delay) -> float:
    return d.mean / 2 if d.shift is None else d.shift


def chi2_dof(d: Delay) -> float:
    """The degrees of freedom k of the shifted, scaled chi^2 a gamma ``Delay`` is (its
    gamma shape is k/2).

    >>> chi2_dof(lan())
    10.0
    >>> round(chi2_dof(wan(cv2=0.5)), 9)
    1.0
    """
    if d.kind != "gamma":
        raise ValueError(f"a {d.kind} delay is no shifted chi^2")
    g = d.mean - _shift(d)
    return 2 * g * g / (d.cv2 * d.mean ** 2)


def series(*legs: Delay) -> Delay:
    """One shifted gamma for a path of independent legs: the sum of their shifts, means
    and variances (module docstring). Constant legs add to the shift only.

    >>> d = series(lan(0.020), wan(0.500))
    >>> round(d.mean, 9), round(d.shift, 9)
    (0.52, 0.26)
    """
    if not legs:
        raise ValueError("a path needs at least one leg")
    mean = sum(d.mean for d in legs)
    shift = var = 0.0
    for d in legs:
        if d.kind == "constant":
            shift += d.mean
        elif d.kind == "gamma":
            shift += _shift(d)
            var += d.cv2 * d.mean ** 2
        else:  # exponential: an unshifted gamma of shape 1
            var += d.mean ** 2
    if var == 0:
        return Delay("constant", mean)
    return Delay("gamma", mean, cv2=var / mean ** 2, shift=shift)


@dataclass(frozen=True)
class Topology:
    """A delay distribution per ordered pair of processes (``delays[i][j]`` from i to j;
    None on the diagonal: a process receives its own messages at once, 001 section 3).
    ``labels`` name the processes in the paper's terms (A .. E); the simulation calls
    process i ``p{i}``."""

    labels: tuple[str, ...]
    delays: tuple[tuple[Delay | None, ...], ...]

    def __post_init__(self) -> None:
        n = len(self.labels)
        if n < 2 or len(set(self.labels)) != n:
            raise TopologyError(f"a topology needs at least 2 distinct process labels, got "
                                f"{list(self.labels)}")
        if len(self.delays) != n or any(len(row) != n for row in self.delays):
            raise TopologyError(f"a topology of {n} processes needs an {n} x {n} delay table")
        for i, row in enumerate(self.delays):
            for j, d in enumerate(row):
                if (d is None) != (i == j):
                    raise TopologyError(f"delay {self.labels[i]} -> {self.labels[j]}: "
                                        + ("none for a process to itself" if i == j
                                           else "missing"))

    @property
    def n(self) -> int:
        return len(self.labels)

    def index(self, label: str) -> int:
        try:
            return self.labels.index(label)
        except ValueError:
            raise TopologyError(f"unknown process {label!r} (known: "
                                f"{', '.join(self.labels)})") from None

    def mean(self, i: int, j: int) -> float:
        """The mean delay D(i, j) (0 for i == j)."""
        d = self.delays[i][j]
        return 0.0 if d is None else d.mean

    def means(self) -> list[list[float]]:
        """The table of mean delays, D(i, j) at [i][j]: what 001's Figure 2 heuristic
        reads."""
        return [[self.mean(i, j) for j in range(self.n)] for i in range(self.n)]

    def link_delays(self) -> dict[tuple[int, int], Delay]:
        """Every link's delay, for ``SimConfig.link_delays``."""
        return {(i, j): d for i, row in enumerate(self.delays) for j, d in enumerate(row)
                if d is not None}

    @classmethod
    def uniform(cls, n: int, delay: Delay) -> Topology:
        """n processes, every link ``delay`` (001's Figure 1)."""
        return cls.groups([[f"p{i}" for i in range(n)]], delay, delay)

    @classmethod
    def groups(cls, groups: Sequence[Sequence[str]], intra: Delay, inter: Delay,
               links: Mapping[tuple[str, str], Delay] | None = None,
               order: Sequence[str] | None = None) -> Topology:
        """Processes in groups (LANs): ``intra`` inside a group, ``inter`` between groups,
        then per-link overrides ``links`` keyed (from label, to label). Processes in the
        order ``order``, by default that of the groups."""
        labels = list(order) if order is not None else [p for g in groups for p in g]
        group = {p: k for k, g in enumerate(groups) for p in g}
        if sorted(labels) != sorted(group) or sum(map(len, groups)) != len(group):
            raise TopologyError(f"groups {[list(g) for g in groups]} must hold each process "
                                f"of {labels} once")
        rows = [[None if a == b else (intra if group[a] == group[b] else inter)
                 for b in labels] for a in labels]
        topo = cls(tuple(labels), tuple(tuple(r) for r in rows))  # validates the labels
        for (a, b), d in (links or {}).items():
            i, j = topo.index(a), topo.index(b)
            if i == j:
                raise TopologyError(f"no link from {a} to itself")
            rows[i][j] = d
        return cls(tuple(labels), tuple(tuple(r) for r in rows))


def fig3_topology(d1: float = 0.020, d2: float = 0.500, reading: str = "ms2",
                  lan_var: float | None = None, wan_var: float | None = None) -> Topology:
    """001 section 4.4 / Figure 3: A, B, C within D1 of each other, D and E within D1,
    D1 + D2 across (a LAN leg then a WAN leg, :func:`series`). Variances in the
    ``reading`` (module docstring); defaults LAN 0.05, WAN 0.4 (ms2) or 0.3 (cv2)."""
    if reading == "ms2":
        intra = absolute(d1, LAN_VAR_MS2 if lan_var is None else lan_var)
        far = absolute(d2, WAN_VAR_MS2 if wan_var is None else wan_var)
    elif reading == "cv2":
        intra = lan(d1, LAN_CV2 if lan_var is None else lan_var)
        far = wan(d2, WAN_CV2 if wan_var is None else wan_var)
    else:
        raise TopologyError(f"reading must be one of {READINGS}, not {reading!r}")
    return Topology.groups([["A", "B", "C"], ["D", "E"]], intra, series(intra, far))


#: named topologies for ``tomkit simulate --topology``
TOPOLOGY_PRESETS = {"001-fig3": fig3_topology,
                    "001-fig3-cv2": lambda: fig3_topology(reading="cv2")}


def topology_preset(name: str) -> Topology:
    try:
        return TOPOLOGY_PRESETS[name]()
    except KeyError:
        raise TopologyError(f"unknown topology preset {name!r}; known: "
                            f"{', '.join(TOPOLOGY_PRESETS)}") from None


# ------------------------------------------------------------------------------ TOML

_TOP_KEYS = ("processes", "groups", "intra", "inter", "network", "link")
_NET_KEYS = ("kind", "mean", "cv2", "var_ms2", "shift", "series")
_LINK_KEYS = ("from", "to", "network")


def line_of(text: str, key: str, after: int = 0) -> int:
    """The first line (1-based) at or after line ``after`` where ``key`` is set or opens a
    table; 0 if none (for error messages)."""
    pat = re.compile(rf"^\s*(\[+\s*)?(\w+\.)*{re.escape(key)}\s*(=|\])")
    for k, ln in enumerate(text.splitlines()[after:], after + 1):
        if pat.match(ln):
            return k
    return 0


def _where(path: str | os.PathLike, text: str, key: str, after: int = 0) -> str:
    k = line_of(text, key, after)
    return f"{path}:{k}" if k else f"{path}"


def read_toml_text(path: str | os.PathLike, error: type[ValueError]) -> tuple[dict, str]:
    """The document and the text of a TOML file; ``error`` names the file (and the line,
    when the parser gives one) if it cannot be read or parsed."""
    import tomllib

    try:
        with open(path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8")
        return tomllib.loads(text), text
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not TOML: {e}") from None


def _number(v: Any, where: str, field: str, positive: bool = True) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (
            positive and v <= 0) or v < 0:
        raise TopologyError(f"{where}: field {field}: expected a "
                            f"{'positive' if positive else 'non-negative'} number of seconds "
                            f"(or a cv2), got {v!r}")
    return float(v)


def read_topology(path: str | os.PathLike) -> Topology:
    """A topology from a TOML file::

        processes = ["A", "B", "C", "D", "E"]       # process i of the run is p{i}
        groups = [["A", "B", "C"], ["D", "E"]]       # optional; default: one group
        intra = "lan"                                # network inside a group
        inter = "path"                               # network between groups
        [network.lan]
        mean = 0.020                                 # seconds
        cv2 = 0.05                                   # variance / mean^2, or
        # var_ms2 = 0.05                             # variance in ms^2
        [network.wan]
        mean = 0.500
        cv2 = 0.3
        [network.path]
        series = ["lan", "wan"]                      # a LAN leg then a WAN leg
        [[link]]                                     # optional per-link override
        from = "A"
        to = "D"
        network = "wan"

    A network is ``kind`` (gamma by default, or constant / exponential), ``mean``,
    ``cv2`` and ``shift`` (default mean / 2), or a ``series`` of other networks.
    Errors name the file, the line and the field."""
    doc, text = read_toml_text(path, TopologyError)
    for k in doc:
        if k not in _TOP_KEYS:
            raise TopologyError(f"{_where(path, text, k)}: unknown field {k!r}; known: "
                                f"{', '.join(_TOP_KEYS)}")
    labels = doc.get("processes")
    if not (isinstance(labels, list) and labels and all(isinstance(x, str) for x in labels)):
        raise TopologyError(f"{_where(path, text, 'processes')}: field processes: expected "
                            f"a list of process labels, got {labels!r}")
    nets_doc = doc.get("network", {})
    if not isinstance(nets_doc, dict):
        raise TopologyError(f"{_where(path, text, 'network')}: field network: expected "
                            "tables [network.NAME]")
    nets: dict[str, Delay] = {}

    def net(name: Any, where: str, field: str, seen: tuple[str, ...] = ()) -> Delay:
        if not isinstance(name, str) or name not in nets_doc:
            raise TopologyError(f"{where}: field {field}: unknown network {name!r}; known: "
                                f"{', '.join(nets_doc) or 'none'}")
        if name in nets:
            return nets[name]
        if name in seen:
            raise TopologyError(f"{where}: field {field}: network {name!r} is a series of "
                                "itself")
        spec = nets_doc[name]
        w = _where(path, text, name)
        if not isinstance(spec, dict):
            raise TopologyError(f"{w}: field network.{name}: expected a table")
        for k in spec:
            if k not in _NET_KEYS:
                raise TopologyError(f"{_where(path, text, k, line_of(text, name))}: unknown "
                                    f"field network.{name}.{k}; known: {', '.join(_NET_KEYS)}")
        if "series" in spec:
            legs = spec["series"]
            if not isinstance(legs, list) or not legs or len(spec) != 1:
                raise TopologyError(f"{w}: field network.{name}.series: expected a list of "
                                    "network names and no other field")
            d = series(*(net(x, w, f"network.{name}.series", (*seen, name)) for x in legs))
        else:
            head = line_of(text, name)

            def fw(key: str) -> str:  # where field ``key`` of this network is
                return _where(path, text, key, head) if key in spec else w

            kind = spec.get("kind", "gamma")
            if kind not in DELAYS:
                raise TopologyError(f"{fw('kind')}: field network.{name}.kind: expected one "
                                    f"of {', '.join(DELAYS)}, got {kind!r}")
            if "mean" not in spec:
                raise TopologyError(f"{w}: field network.{name}.mean: missing")
            mean = _number(spec["mean"], fw("mean"), f"network.{name}.mean")
            if "cv2" in spec and "var_ms2" in spec:
                raise TopologyError(f"{fw('var_ms2')}: network.{name}: give cv2 or var_ms2, "
                                    "not both")
            if "var_ms2" in spec:
                cv2 = _number(spec["var_ms2"], fw("var_ms2"),
                              f"network.{name}.var_ms2") * 1e-6 / mean ** 2
            else:
                cv2 = _number(spec.get("cv2", LAN_CV2), fw("cv2"), f"network.{name}.cv2")
            shift = spec.get("shift")
            if shift is not None:
                shift = _number(shift, fw("shift"), f"network.{name}.shift", positive=False)
            try:
                d = Delay(kind, mean, cv2=cv2, shift=shift)
            except ValueError as e:
                raise TopologyError(f"{w}: network.{name}: {e}") from None
        nets[name] = d
        return d

    groups = doc.get("groups", [labels])
    if not (isinstance(groups, list) and all(isinstance(g, list) for g in groups)
            and sorted(x for g in groups for x in g) == sorted(labels)):
        raise TopologyError(f"{_where(path, text, 'groups')}: field groups: expected lists "
                            f"that together hold each process once, got {groups!r}")
    intra = net(doc.get("intra"), _where(path, text, "intra"), "intra")
    inter = (net(doc.get("inter"), _where(path, text, "inter"), "inter")
             if len(groups) > 1 or "inter" in doc else intra)
    links: dict[tuple[str, str], Delay] = {}
    link_docs = doc.get("link", [])
    if not isinstance(link_docs, list):
        raise TopologyError(f"{_where(path, text, 'link')}: field link: expected [[link]] "
                            "tables")
    after = 0
    for k, ld in enumerate(link_docs, 1):
        after = line_of(text, "link", after)
        w = f"{path}:{after}" if after else str(path)
        if not isinstance(ld, dict) or set(ld) != set(_LINK_KEYS):
            raise TopologyError(f"{w}: link {k}: expected the fields "
                                f"{', '.join(_LINK_KEYS)}, got {ld!r}")
        for end in ("from", "to"):
            if ld[end] not in labels:
                raise TopologyError(f"{w}: field link.{end}: unknown process {ld[end]!r}")
        links[(ld["from"], ld["to"])] = net(ld["network"], w, "link.network")
    try:
        return Topology.groups([[str(x) for x in g] for g in groups], intra, inter, links,
                               order=labels)
    except TopologyError as e:
        raise TopologyError(f"{path}: {e}") from None
