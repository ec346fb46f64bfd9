"""QoS traces for the Spark tests (test_properties_qos_spark.py, test_spark_scan.py): clean
ones and every planted violation kind of member-liveness, realtime-latency and rate (the
QoS-preserving multicast of Bar-Joseph, Keidar, Anker and Lynch), with the options that
judge them."""

from __future__ import annotations

from tomkit.checker.properties import Options

OPTIONS = Options(realtime_bound=0.165, slot=0.1, rate_max=3, rate_avg=5, rate_window=2)
QOS = ("member-liveness", "realtime-latency", "rate")


def _run(tid: str, n: int = 3, drop: tuple = (), late: float = 0.0, packets=None,
         real: bool = True, extra: list | None = None) -> list[dict]:
    """Every process sends one message in slot 0 and delivers all in slot 1; ``drop``
    (process, msg) deliveries left out, ``late`` added to p1's deliveries in real time."""
    procs = [f"p{i}" for i in range(n)]
    out = []
    for i, p in enumerate(procs):
        rec = {"trace": tid, "process": p, "kind": "send", "msg": f"{p}.m", "time": 0.01 * i,
               "x_slot": 0}
        if real:
            rec["real_time"] = 0.01 * i + 0.002
        out.append(rec)
        for t in (packets or {}).get(p, [0.05, 0.1]):
            out.append({"trace": tid, "process": p, "kind": "packet", "time": t,
                        **({"real_time": t} if real else {})})
        for q in procs:
            if (p, f"{q}.m") in drop:
                continue
            d = {"trace": tid, "process": p, "kind": "deliver", "msg": f"{q}.m", "time": 0.15}
            if real:
                d["real_time"] = 0.15 + (late if p == "p1" else 0.0)
            out.append(d)
    return out + (extra or [])


def qos_records() -> list[dict]:
    recs = _run("clean") + _run("no-real-time", real=False)
    recs += _run("no-packets", packets={"p0": [], "p1": [], "p2": []})
    recs += _run("miss", drop=(("p2", "p0.m"),))
    recs += _run("late", late=0.03)
    recs += _run("rate-max", packets={"p1": [0.11, 0.12, 0.13, 0.14]})
    recs += _run("rate-window", packets={"p1": [0.11, 0.12, 0.13, 0.21, 0.22, 0.23]})
    recs += _run("unplaced", extra=[{"trace": "unplaced", "process": "p0", "kind": "packet"}])
    # join announcements (x_join) are outside the reservation: not counted
    recs += _run("join-copies", extra=[
        {"trace": "join-copies", "process": "p1", "kind": "packet", "time": 0.15,
         "x_slot": 0, "x_join": True} for _ in range(4)])
    # a crashed sender's message reaches p0 only: 003 allows it
    recs += _run("crash", drop=(("p1", "p2.m"),), extra=[
        {"trace": "crash", "process": "p2", "kind": "crash", "time": 0.05}])
    # a joiner (slot 1) owes nothing of slot 0; a joiner that misses a later message
    join = [{"trace": "join", "process": "j", "kind": "join", "time": 0.1, "x_slot": 1},
            {"trace": "join", "process": "p0", "kind": "send", "msg": "late", "time": 0.12,
             "x_slot": 1}]
    join += [{"trace": "join", "process": p, "kind": "deliver", "msg": "late", "time": 0.25}
             for p in ("p0", "p1", "p2")]
    recs += _run("join", extra=join + [{"trace": "join", "process": "j", "kind": "deliver",
                                        "msg": "late", "time": 0.25}])
    recs += _run("join-miss", extra=[dict(r, trace="join-miss") for r in join])
    return recs
