"""The simulator's fast paths give what the slow ones give: delays drawn in blocks are the
per-message draws, a rule run compiled writes the same trace as the rule run on
ConcreteRuleView, and the incrementally kept activation state matches recomputing it at
every delivery of real simulated runs."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tomkit.model import kernel
from tomkit.model.net.links import Delay, DelayDraws
from tomkit.model.sim import SimConfig, simulate
from tomkit.model.toto.dag import DagView
from tomkit.model.toto.rules import RULES, Params
from tomkit.model.toto.vocab import Delivery, RuleView


@pytest.mark.parametrize("delay", [Delay("constant", 0.002), Delay("exponential", 0.003),
                                   Delay("gamma", 0.001), Delay("gamma", 0.02, cv2=3.0)])
def test_delays_drawn_in_blocks_are_the_per_message_draws(delay: Delay) -> None:
    one = np.random.default_rng(7)
    want = [delay.sample(one, k).tolist() for k in [3, 3, 7, 1, 3] * 20]
    draws = DelayDraws(delay, np.random.default_rng(7), block=10)
    assert [draws.take(len(w)) for w in want] == want


def concrete_only(name: str):
    """The rule ``name`` with a Python branch on a value, so it cannot be compiled and
    runs on ConcreteRuleView (model/toto/compiled.py)."""
    rule = RULES[name]

    def wrapped(v: RuleView, params: Params) -> Delivery | None:
        if v.ntail_g == v.n:  # refused by the tracing view: never compiled
            pass
        return rule(v, params)

    return wrapped


@pytest.mark.parametrize("n", [5, 11])  # 11: vote masks of two bytes (DagView._advance)
@pytest.mark.parametrize("name", sorted(RULES))
def test_compiled_and_concrete_rules_write_the_same_trace(name: str, n: int,
                                                          monkeypatch) -> None:
    if kernel.compiled_modules().get("tomkit.model.toto.dag"):
        # a view compiled by mypyc (model/kernel.py) cannot be patched: the check of the
        # Python source's incremental state runs in a process with the Python view (that
        # the compiled view writes the same traces is tests/model/test_sim_kernel.py's)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
             "no:xdist", f"{__file__}::test_compiled_and_concrete_rules_write_the_same_trace"
             f"[{name}-{n}]"], env={**os.environ, kernel.ENV: "1"}, capture_output=True,
            text=True, timeout=900, cwd=os.path.dirname(os.path.dirname(__file__)))
        assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-3000:]
        return
    advanced = []
    deliver = DagView.deliver

    def checked(self: DagView, mids, end_activation: bool = True) -> None:
        deliver(self, mids, end_activation)
        fresh = DagView(self.processors)
        fresh.__dict__.update({k: (v.copy() if hasattr(v, "copy") else v)
                               for k, v in self.__dict__.items()})
        fresh._recompute_activation()
        assert fresh.activation_state() == self.activation_state()
        assert fresh._blocked == self._blocked and fresh._voter_vc == self._voter_vc
        advanced.append(1)

    monkeypatch.setattr(DagView, "deliver", checked)
    base = dict(protocol=name, n=n, source="poisson", rate=200.0 / n, messages=150,
                delay=Delay("gamma", 0.004), crashes=((1, 0.6),), seed=11, trace_id="eq",
                max_events=100_000)  # a run that stops delivering fails, not hangs
    fast = simulate(SimConfig(**base))
    slow = simulate(SimConfig(**base, options={"rule": concrete_only(name)}))
    assert fast.records == slow.records
    assert fast.stats["deliveries"] > 0 and advanced
