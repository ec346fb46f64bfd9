"""RabbitMQ streams recorded live (tomkit/record/rabbitmq/): a clean run and a killed
stream leader, small and bounded, judged by the profile RabbitMQ documents."""

from __future__ import annotations

from dataclasses import replace

import pytest
from live_record import LIVE_TIMEOUT, check, live, records, verdicts

#: three Erlang VMs boot and cluster before the run starts: about 25 s here unloaded
RABBIT_TIMEOUT = 2 * LIVE_TIMEOUT


@pytest.mark.record
# kill-leader: both survivors' consumers stop at one offset when the leader dies (the
# stream's members restart); the recorder subscribes again, and every confirmed message
# is then read from both replicas (docs/case-studies.md, "RabbitMQ kill-leader")
@pytest.mark.parametrize("run", ["clean", "kill-leader"])
def test_rabbitmq_live(tmp_path, run):
    mod = live("rabbitmq")
    out = tmp_path / f"rabbitmq-{run}.jsonl.gz"
    mod.record(replace(mod.RUNS[run], messages=15), out, seed=3, timeout=RABBIT_TIMEOUT,
               say=lambda s: None)
    code, report = check("--guarantee-file", str(mod.profile_file()), str(out))
    assert code == 0, report["traces"][0]["results"]
    # validity of every send holds on a clean run; with the leader killed, a publish that
    # was never confirmed may be lost (RabbitMQ promises only confirmed messages, its
    # publisher-confirms guide), so there the promise is the confirmed-not-lost check below
    props = "agreement,validity,total-order-strong" if run == "clean" else \
        "agreement,total-order-strong"
    code, report = check("-p", props, str(out))
    assert code == 0, verdicts(report)
    recs = records(out)
    confirmed = {r["msg"] for r in recs if r["kind"] == "send" and r.get("x_put") == "ok"}
    crashed = {r["process"] for r in recs if r["kind"] == "crash"}
    for p in {r["process"] for r in recs} - crashed:  # no confirmed message lost
        mine = [r for r in recs if r["kind"] == "deliver" and r["process"] == p]
        assert confirmed <= {r["msg"] for r in mine}
        assert [r["x_offset"] for r in mine] == sorted(r["x_offset"] for r in mine)
    if run == "clean":
        assert crashed == set() and len(confirmed) == 45
    else:
        (crash,) = [r for r in recs if r["kind"] == "crash"]
        assert crash["x_fault"][0] == {**crash["x_fault"][0], "fault": "kill",
                                       "role": "leader"}
