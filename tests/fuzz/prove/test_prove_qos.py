"""The Z3 proof of the latency bound of Bar-Joseph, Keidar, Anker and Lynch's QoS-preserving
multicast (fuzz/prove/qos_bound.py), in smoke form (n <= 4; `tomkit prove --protocol qos`
runs n = 2..16): the bound is proved for every Delta, delta, epsilon, one epsilon less is
refuted by the reading aid's tight cases (160 and 170 ms), and the refuting run, written as
a trace, is rejected by the real-time latency check and passed by the local-clock one."""

from __future__ import annotations

import pytest
from locations import ROOT

from tomkit.cli import main
from tomkit.fuzz.prove.qos_bound import prove_bound, prove_qos, refute_bound
from tomkit.traces.reader import read_records


@pytest.mark.parametrize("crashes", [0, 1])
def test_bound_proved_and_one_epsilon_less_refuted(crashes):
    for n in (2, 4):
        assert prove_bound(n, crashes)[0] == "proved"
    assert prove_bound(3, crashes, less=1)[0] == "counterexample"


@pytest.mark.parametrize("crashes, worst", [(0, 0.160), (1, 0.170)])
def test_refutation_is_the_tight_case(crashes, worst):
    run = refute_bound(3, crashes)
    assert run is not None and abs(run["latency"] - worst) < 1e-9
    assert abs(run["smaller"] - (worst - 0.01)) < 1e-9
    # the clocks sit at the edges the derivation names: the sender fast by eps/2
    assert abs(run["offsets"][run["sender"]] - 0.005) < 1e-12
    assert (len(run["crashed"]) == 1) == bool(crashes)


def test_counterexample_trace_rejected_by_the_real_time_check(tmp_path, capsys):
    o = prove_qos(3, 1, out=str(tmp_path))
    assert o.status == "proved" and o.files
    trace = o.files["trace"]
    recs = list(read_records(trace))
    assert all("real_time" in r for r in recs)
    assert main(["check", trace, "-q", "--realtime-bound", "0.16"]) == 1
    assert "realtime-latency    VIOLATED" in capsys.readouterr().out
    assert main(["check", trace, "-q", "-p", "realtime-latency", "--latency-bound",
                 "0.16"]) == 1
    capsys.readouterr()
    # on the local clocks the same run stays within Delta + delta + eps
    assert main(["check", trace, "-q", "--latency-bound", "0.1600001"]) == 0


def test_cli(tmp_path, capsys):
    assert main(["prove", "--protocol", "qos", "--n", "2-3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("proved") == 4 and "170.000 ms" in out and "160.000 ms" in out
    assert (tmp_path / "qos-bound-n2-f1.jsonl").exists()
    assert main(["prove", "--protocol", "qos", "--variant", "raise-all"]) == 2
    assert main(["prove", "--protocol", "qos", "--delta", "2"]) == 2
    assert "--delta" in capsys.readouterr().err


def test_bench_smoke(capsys):
    """bench/qos_bound_bench.py in smoke form: both forms prove the bound at n = 2, 3."""
    import importlib.util

    path = ROOT / "bench" / "qos_bound_bench.py"
    spec = importlib.util.spec_from_file_location("qos_bound_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--n", "2,3"]) == 0
    out = capsys.readouterr().out
    assert out.count("proved, proved") == 4
