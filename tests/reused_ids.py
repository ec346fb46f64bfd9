"""Planted traces with a message id sent more than once (by two processes, or twice by
one), shared by the engines' tests (tests/checker/test_reused_ids.py and
tests/checker/spark/test_spark_scan.py's data set): each with fifo-order's and causal-order's
verdict and sentence under their reading of a reused id (their module docstrings)."""

from __future__ import annotations

from tomkit.checker.result import Verdict

NAMES = ["fifo-order", "causal-order", "integrity"]
H, V, U = Verdict.HOLDS, Verdict.VIOLATED, Verdict.UNKNOWN

#: (trace, fifo-order's verdict and sentence, causal-order's verdict and sentence)
CASES = {
    # the false alarm: m0 was attributed to a (first by name), while b's order still held
    # it, so x was said to skip m0 "delivered only later, as #0"
    "second-sender-first": (
        "b send m0\nb send x\na send m0\np deliver m0\np deliver x", H, "", U, ""),
    "first-sender-first": (
        "a send m0\na send x\nb send m0\np deliver m0\np deliver x", H, "", U, ""),
    # a true breach elsewhere is still found, in its own words
    "breach-elsewhere": (
        "b send m0\nb send x\na send m0\nc send y\nc send z\n"
        "p deliver m0\np deliver x\np deliver z\np deliver y",
        V, "c sends y before z, but p delivers z as #2 and delivers y only later, as #3.",
        U, ""),
    # a breach of the reused id's own place in its second sender's order
    "reused-id-delivered-late": (
        "b send m0\nb send x\na send m0\np deliver x\np deliver m0",
        V, "b sends m0 before x, but p delivers x as #0 and delivers m0 only later, as #1.",
        U, ""),
    # the second sender sent w before m0: delivering m0 without w skips w
    "second-sender-gap": (
        "a send m0\nb send w\nb send m0\np deliver m0",
        V, "b sends w before m0, but p delivers m0 as #0 and never delivers w.", U, ""),
    # the same sender twice: its second send of m0 adds no place in its order
    "same-sender-twice": (
        "b send m0\nb send x\nb send m0\nb send y\np deliver m0\np deliver x\np deliver y",
        H, "", U, ""),
    "same-sender-twice-gap": (
        "b send m0\nb send x\nb send m0\nb send y\np deliver m0\np deliver y",
        V, "b sends x before y, but p delivers y as #1 and never delivers x.", U, ""),
    # causal: the second send's deps count (the first carried none: it was "unknown")
    "causal-second-send-deps": (
        "a send m0\nb send m0 deps=d\nc send d\np deliver m0\np deliver d",
        H, "", V, "m0 depends on d (deps of its send by b), but p delivers m0 as #0 and "
        "delivers d only later, as #1."),
    "causal-second-send-deps-met": (
        "a send m0 deps=\nb send m0 deps=d\nc send d\np deliver d\np deliver m0",
        H, "", H, ""),
    "causal-both-sends-deps": (
        "a send m0 deps=e\nb send m0 deps=d\nc send d\nc send e\np deliver d\np deliver m0"
        "\np deliver e",
        H, "", V,
        "m0 depends on e (deps of its send by a), but p delivers m0 as #1 and delivers e "
        "only later, as #2."),
    # a send listing its own message, and the reused id's second send listing it
    "causal-self-dependency": (
        "a send m0 deps=\na send m0 deps=m0\np deliver m0", H, "", V,
        "m0 lists itself among its deps (its send by a), so p's delivery of it as #0 "
        "cannot come after it."),
}

_V = "a view {v} members=a,z,p\nz view {v} members=a,z,p\np view {v} members=a,z,p\n"

#: traces with a reused id for the properties that name a send (validity, latency,
#: sending-view-delivery, member-liveness; tests/checker/test_reused_ids.py states their
#: verdicts): the Spark data set holds them, so its engines meet them too
OTHERS = {
    "validity-second-sender": "a send m0\nz send m0\na deliver m0",
    "sending-view-later-sender": _V.format(v=1) + "a send m0\n" + _V.format(v=2)
    + "z send m0\np deliver m0",
    "sending-view-neither": _V.format(v=1) + "z send m0\n" + _V.format(v=2) + "a send m0\n"
    + _V.format(v=3) + "p deliver m0",
    "member-correct-resender": "a send m0\na crash\nz send m0\nz deliver m0\nq deliver x",
    "latency-earliest-send": "z send m0 time=5\na send m0 time=0\np deliver m0 time=6",
}
