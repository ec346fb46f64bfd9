"""003's FEC layer (Bar-Joseph, Keidar, Anker and Lynch's QoS-preserving multicast,
section 2.2): the
message counts per slot, recovery from every pattern of at most L losses per block,
no delivery past an unrecoverable block, the reservation formulas and the burst-loss
adversary. Defaults of the reading aid's test suite: I = 5, L = 2."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tomkit.model.qos.fec import (
    BurstLoss,
    Eos,
    FecReceiver,
    FecSender,
    packets_per_slot,
    reserved_avg,
    reserved_max,
    within_burst_bound,
)

I, L = 5, 2  # noqa: E741 (the paper's names)


def slot_packets(sender: FecSender, messages: list) -> list:
    out = []
    for m in messages:
        out += sender.send(m)
    return out + sender.end_slot()


COUNTS = [(0, 3), (1, 3), (2, 4), (3, 5), (4, 8), (6, 10), (7, 13)]


@pytest.mark.parametrize(("n_s", "count"), COUNTS)
def test_packets_per_slot(n_s: int, count: int) -> None:
    sender = FecSender(I, L)
    packets = slot_packets(sender, list(range(n_s)))
    assert len(packets) == count == packets_per_slot(n_s, I, L)
    assert [p.last for p in packets].count(True) == packets[-1].size  # only the last block


def test_first_block_goes_out_at_the_fourth_original() -> None:
    sender = FecSender(I, L)
    assert sender.send("a") == [] and sender.send("b") == [] and sender.send("c") == []
    block = sender.send("d")
    assert [p.payload for p in block[:3]] == ["a", "b", "c"] and len(block) == 5
    assert not any(p.last for p in block)
    assert sender.pending == ["d"]


def deliver_all(packets: list, lost: set[int]) -> list:
    receiver = FecReceiver(L)
    out = []
    for k, p in enumerate(packets):
        if k not in lost:
            out += receiver.receive(p)
    return out


@pytest.mark.parametrize("n_s", [0, 1, 3, 4, 7])
def test_every_pattern_of_at_most_l_losses_per_block_recovers(n_s: int) -> None:
    packets = slot_packets(FecSender(I, L), [f"m{k}" for k in range(n_s)])
    expected = [(0, f"m{k}") for k in range(n_s)] + [Eos(0)]
    blocks: dict[int, list[int]] = {}
    for k, p in enumerate(packets):
        blocks.setdefault(p.block, []).append(k)
    per_block = [
        [set(c) for r in range(L + 1) for c in itertools.combinations(ks, r)]
        for ks in blocks.values()
    ]
    for choice in itertools.product(*per_block):
        lost = set().union(*choice)
        assert deliver_all(packets, lost) == expected, lost


def test_lose_index_mod_i_below_l_loses_no_application_message() -> None:
    sender = FecSender(I, L)
    packets = []
    for slot in range(4):
        packets += slot_packets(sender, [(slot, k) for k in range(slot * 3)])
    lost = {k for k in range(len(packets)) if k % I < L}
    assert within_burst_bound([k in lost for k in range(len(packets))], I, L)
    got = deliver_all(packets, lost)
    sent = [(s, (s, k)) for s in range(4) for k in range(s * 3)]
    assert [x for x in got if not isinstance(x, Eos)] == sent
    assert [x for x in got if isinstance(x, Eos)] == [Eos(s) for s in range(4)]


def test_l_plus_one_losses_stop_delivery_at_the_gap() -> None:
    # A crashing sender escapes the bound: block 0 loses L+1, block 1 arrives whole.
    packets = slot_packets(FecSender(I, L), [f"m{k}" for k in range(5)])
    first = [k for k, p in enumerate(packets) if p.block == 0]
    got = deliver_all(packets, {first[1], first[3], first[4]})
    assert got == [(0, "m0")]  # m0 came before the gap; nothing past it, no EOS
    receiver = FecReceiver(L)
    for k, p in enumerate(packets):
        if k not in {first[1], first[3], first[4]}:
            receiver.receive(p)
    assert not receiver.recoverable(0) and receiver.recoverable(1)


def test_originals_are_delivered_at_once_without_gaps_and_surplus_is_discarded() -> None:
    packets = slot_packets(FecSender(I, L), ["a", "b", "c"])
    receiver = FecReceiver(L)
    assert receiver.receive(packets[0]) == [(0, "a")]
    assert receiver.receive(packets[2]) == []  # gap at b: wait for size-L = 3
    assert receiver.receive(packets[3]) == [(0, "b"), (0, "c"), Eos(0)]
    assert receiver.receive(packets[4]) == []  # surplus


def test_rates_of_the_reading_aid() -> None:
    assert reserved_max(6, I, L) == 12
    assert packets_per_slot(6, I, L) == 10 <= reserved_max(6, I, L)
    slots = [4] * 5 + [0] * 5
    assert sum(packets_per_slot(n, I, L) for n in slots) == 55
    assert reserved_avg(20, 10, I, L) == Fraction(190, 3)  # 63.33


@settings(max_examples=200, deadline=None)
@given(
    i=st.integers(2, 9),
    data=st.data(),
)
def test_reservation_bounds_every_slot_pattern(i: int, data: st.DataObject) -> None:
    loss = data.draw(st.integers(0, i - 1))
    slots = data.draw(st.lists(st.integers(0, 30), min_size=1, max_size=12))
    counts = [packets_per_slot(n, i, loss) for n in slots]
    assert max(counts) <= reserved_max(max(slots), i, loss)
    assert sum(counts) <= reserved_avg(sum(slots), len(slots), i, loss)
    sender = FecSender(i, loss)
    assert [len(slot_packets(sender, list(range(n)))) for n in slots] == counts


def test_reserved_max_covers_the_dummy_block_of_an_empty_reservation() -> None:
    assert reserved_max(0, I, L) == 1 + L  # the formula alone gives L


def test_within_burst_bound() -> None:
    assert within_burst_bound([True, True, False, False, False, True, True], I, L)
    assert not within_burst_bound([True, False, True, False, True], I, L)
    assert not within_burst_bound([False, True, True, True], I, L)


@pytest.mark.parametrize("seed", range(5))
def test_burst_loss_adversary_never_exceeds_the_bound_and_loses_up_to_it(seed: int) -> None:
    adversary = BurstLoss(I, L, p=0.7, rng=np.random.default_rng(seed))
    pattern = [adversary.lose(("p", "q")) for _ in range(2000)]
    assert within_burst_bound(pattern, I, L)
    windows = np.convolve(np.asarray(pattern, dtype=int), np.ones(I, dtype=int), mode="valid")
    assert windows.max() == L
    other = [adversary.lose(("q", "p")) for _ in range(10)]
    assert sum(other[:I]) <= L  # per link: ("p", "q")'s history does not leak


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="0 <= L < I"):
        FecSender(3, 3)
    with pytest.raises(ValueError, match="probability"):
        BurstLoss(I, L, p=1.5, rng=np.random.default_rng(0))
