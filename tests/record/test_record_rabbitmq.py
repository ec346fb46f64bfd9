"""RabbitMQ streams recorded live (tomkit/record/rabbitmq/): a clean run, a partitioned
stream leader and a killed one, small and bounded, judged by the profile RabbitMQ
documents. Booting three Erlang VMs is most of a run's cost (25 s unloaded, up to 2
minutes under load), so the module's runs share one boot, each on a stream of its own;
the kill runs last."""

from __future__ import annotations

from dataclasses import replace

import pytest
from live_record import LIVE_TIMEOUT, check, live, records, verdicts

#: three Erlang VMs boot and cluster before the first run: a bound, not a target (240 s
#: was too short for two suites booting RabbitMQ at once beside a third, load 24)
BOOT_TIMEOUT = 5 * LIVE_TIMEOUT


@pytest.fixture(scope="module")
def boot():
    mod = live("rabbitmq")
    with mod.booted(3, timeout=BOOT_TIMEOUT) as b:
        yield b


@pytest.mark.record
# partition-leader: the leader cut off from the others (not from the clients), healed;
# kill-leader: both survivors' consumers stop at one offset when the leader dies (the
# stream's members restart); the recorder subscribes again, and every confirmed message
# is then read from both replicas (docs/case-studies.md, "RabbitMQ kill-leader")
@pytest.mark.parametrize("run", ["clean", "partition-leader", "kill-leader"])
def test_rabbitmq_live(tmp_path, boot, run):
    mod = live("rabbitmq")
    out = tmp_path / f"rabbitmq-{run}.jsonl.gz"
    mod.record(replace(mod.RUNS[run], messages=15), out, seed=3, timeout=LIVE_TIMEOUT,
               say=lambda s: None, boot=boot)
    code, report = check("--guarantee-file", str(mod.profile_file()), str(out))
    assert code == 0, report["traces"][0]["results"]
    # validity of every send holds without a kill; with the leader killed, a publish that
    # was never confirmed may be lost (RabbitMQ promises only confirmed messages, its
    # publisher-confirms guide), so there the promise is the confirmed-not-lost check below
    props = "agreement,total-order-strong" if run == "kill-leader" else \
        "agreement,validity,total-order-strong"
    code, report = check("-p", props, str(out))
    assert code == 0, verdicts(report)
    recs = records(out)
    confirmed = {r["msg"] for r in recs if r["kind"] == "send" and r.get("x_put") == "ok"}
    crashed = {r["process"] for r in recs if r["kind"] == "crash"}
    for p in {r["process"] for r in recs} - crashed:  # no confirmed message lost
        mine = [r for r in recs if r["kind"] == "deliver" and r["process"] == p]
        assert confirmed <= {r["msg"] for r in mine}
        assert [r["x_offset"] for r in mine] == sorted(r["x_offset"] for r in mine)
    notes = [f for r in recs for f in r.get("x_fault", ())]
    if run == "clean":
        assert crashed == set() and notes == [] and len(confirmed) == 45
    elif run == "partition-leader":  # cut off and healed: every message confirmed
        assert crashed == set() and len(confirmed) == 45
        assert [f["fault"] for f in notes] == ["partition", "end partition"]
        assert notes[0]["role"] == "leader"
    else:
        (crash,) = [r for r in recs if r["kind"] == "crash"]
        assert crash["x_fault"][0] == {**crash["x_fault"][0], "fault": "kill",
                                       "role": "leader"}
