"""Maelstrom's services: key-value stores and a timestamp oracle inside the harness.

Source: jepsen-io/maelstrom, ``doc/services.md``. A node uses a service by sending it
an RPC (``read`` {key}, ``write`` {key, value}, ``cas`` {key, from, to,
create_if_not_exists}; ``ts`` for ``lin-tso``); errors are Maelstrom's codes 20
(key-does-not-exist) and 22 (precondition-failed).

* ``lin-kv``: linearizable. One map; each request takes effect when it arrives, a
  point between its send and its reply.
* ``seq-kv``: sequentially consistent, *not* linearizable. The states form one total
  order (one version per update, applied at the head); every caller (a node id) has a
  position in it that only moves forward. A read returns one of the key's values drawn
  uniformly from the one current at the caller's position to the latest, so stale reads
  really happen (as often on a key written rarely as on one written all the time), and
  moves the caller to that value's version; an update is applied at the head and moves
  the caller to the head. Every caller's operations thus fit one total order in its own program
  order (Lamport's sequential consistency), while a read may miss a write that
  completed before it began: exactly what a node that trusts seq-kv as if it were
  linearizable gets wrong.
* ``lww-kv``: intentionally pathological last-write-wins store. ``replicas`` (5)
  independent copies answer requests independently (a copy drawn at random per
  request); a write is stamped with the copy's clock (the harness's clock plus a fixed
  skew per copy); copies gossip pairwise every ``gossip_interval`` seconds, keeping
  the higher stamp. Reads are stale and can go back in time.
* ``lin-tso``: a linearizable timestamp oracle (``ts`` -> ``ts_ok`` {ts}), strictly
  increasing.

Keys may be any JSON value; they are compared by their JSON text.
"""

from __future__ import annotations

import bisect
import json
import random
from collections.abc import Callable
from typing import Any

from .protocol import (
    KEY_DOES_NOT_EXIST,
    MALFORMED,
    NOT_SUPPORTED,
    PRECONDITION_FAILED,
    Message,
    error_body,
)

__all__ = ["SERVICES", "LinKV", "LinTSO", "LwwKV", "SeqKV", "Service", "make_services"]

_MISSING = object()


def _key(key: Any) -> str:
    return json.dumps(key, sort_keys=True)


class Service:
    """An in-harness node: ``__call__(msg)`` returns the replies."""

    name = ""

    def __init__(self, rng: random.Random, now: Callable[[], float]):
        self.rng, self.now = rng, now
        self.requests = 0

    def __call__(self, msg: Message) -> list[Message]:
        body = msg.body
        self.requests += 1
        handler = getattr(self, "op_" + body.get("type", ""), None)
        msg_id = body.get("msg_id")
        if handler is None:
            reply = error_body(NOT_SUPPORTED, f"{self.name} has no operation "
                               f"{body.get('type')!r}", msg_id)
        else:
            try:
                reply = handler(msg.src, body)
            except KeyError as e:
                reply = error_body(MALFORMED, f"missing field {e.args[0]!r}", msg_id)
            if msg_id is not None:
                reply["in_reply_to"] = msg_id
        return [Message(self.name, msg.src, reply)]

    # a key-value store: read, write, cas over get / put
    def get(self, caller: str, key: str) -> Any:
        raise NotImplementedError

    def put(self, caller: str, key: str, value: Any) -> None:
        raise NotImplementedError

    def op_read(self, caller: str, body: dict) -> dict:
        v = self.get(caller, _key(body["key"]))
        if v is _MISSING:
            return error_body(KEY_DOES_NOT_EXIST, "key does not exist", None)
        return {"type": "read_ok", "value": v}

    def op_write(self, caller: str, body: dict) -> dict:
        self.put(caller, _key(body["key"]), body["value"])
        return {"type": "write_ok"}

    def op_cas(self, caller: str, body: dict) -> dict:
        k = _key(body["key"])
        v = self.cas_base(caller, k)
        if v is _MISSING and not body.get("create_if_not_exists"):
            return error_body(KEY_DOES_NOT_EXIST, "key does not exist", None)
        if v is not _MISSING and v != body["from"]:
            return error_body(PRECONDITION_FAILED,
                              f"expected {body['from']!r}, but had {v!r}", None)
        self.put(caller, k, body["to"])
        return {"type": "cas_ok"}

    def cas_base(self, caller: str, key: str) -> Any:
        """The value a cas compares against (the latest, for lin-kv and seq-kv)."""
        return self.get(caller, key)


class LinKV(Service):
    name = "lin-kv"

    def __init__(self, rng: random.Random, now: Callable[[], float]):
        super().__init__(rng, now)
        self.data: dict[str, Any] = {}

    def get(self, caller: str, key: str) -> Any:
        return self.data.get(key, _MISSING)

    def put(self, caller: str, key: str, value: Any) -> None:
        self.data[key] = value


class SeqKV(Service):
    name = "seq-kv"

    def __init__(self, rng: random.Random, now: Callable[[], float]):
        super().__init__(rng, now)
        self.head = 0  # the number of updates so far: version 0 is the empty store
        self.history: dict[str, tuple[list[int], list[Any]]] = {}  # key -> versions, values
        self.position: dict[str, int] = {}
        self.stale_reads = 0

    def _at(self, key: str, version: int) -> Any:
        versions, values = self.history.get(key, ((), ()))
        i = bisect.bisect_right(versions, version) - 1
        return values[i] if i >= 0 else _MISSING

    def get(self, caller: str, key: str) -> Any:
        # one of the key's values from the one current at the caller's position to the
        # latest, drawn uniformly: the read is placed at that value's version (or at the
        # caller's position, for the value it already had), so positions only move on
        pos = self.position.get(caller, 0)
        versions, values = self.history.get(key, ((), ()))
        first = bisect.bisect_right(versions, pos) - 1  # -1: missing at pos
        j = self.rng.randint(first, len(versions) - 1) if versions else -1
        value = values[j] if j >= 0 else _MISSING
        if j >= 0:
            self.position[caller] = max(pos, versions[j])
        if j != len(versions) - 1:
            self.stale_reads += 1
        return value

    def cas_base(self, caller: str, key: str) -> Any:
        self.position[caller] = self.head
        return self._at(key, self.head)

    def put(self, caller: str, key: str, value: Any) -> None:
        self.head += 1
        versions, values = self.history.setdefault(key, ([], []))
        versions.append(self.head)
        values.append(value)
        self.position[caller] = self.head


class LwwKV(Service):
    name = "lww-kv"

    def __init__(self, rng: random.Random, now: Callable[[], float], replicas: int = 5,
                 gossip_interval: float = 0.5, max_skew: float = 0.05):
        super().__init__(rng, now)
        self.copies: list[dict[str, tuple[float, int, Any]]] = [{} for _ in range(replicas)]
        self.skew = [rng.uniform(-max_skew, max_skew) for _ in range(replicas)]
        self.gossip_interval = gossip_interval
        self.last_gossip = 0.0

    def _gossip(self) -> None:
        t = self.now()
        while t - self.last_gossip >= self.gossip_interval:
            self.last_gossip += self.gossip_interval
            a, b = self.rng.sample(range(len(self.copies)), 2)
            for k in set(self.copies[a]) | set(self.copies[b]):
                best = max((c[k] for c in (self.copies[a], self.copies[b]) if k in c),
                           key=lambda x: (x[0], x[1]))
                self.copies[a][k] = self.copies[b][k] = best

    def __call__(self, msg: Message) -> list[Message]:
        self._gossip()
        self.copy = self.rng.randrange(len(self.copies))
        return super().__call__(msg)

    def get(self, caller: str, key: str) -> Any:
        got = self.copies[self.copy].get(key)
        return _MISSING if got is None else got[2]

    def put(self, caller: str, key: str, value: Any) -> None:
        self.copies[self.copy][key] = (self.now() + self.skew[self.copy], self.copy, value)


class LinTSO(Service):
    name = "lin-tso"

    def __init__(self, rng: random.Random, now: Callable[[], float]):
        super().__init__(rng, now)
        self.ts = 0

    def op_ts(self, caller: str, body: dict) -> dict:
        self.ts += 1
        return {"type": "ts_ok", "ts": self.ts}


SERVICES: dict[str, type[Service]] = {s.name: s for s in (LinKV, SeqKV, LwwKV, LinTSO)}


def make_services(rng: random.Random, now: Callable[[], float]) -> dict[str, Service]:
    """One of each service, each with its own random stream drawn from ``rng``."""
    return {name: cls(random.Random(rng.random()), now) for name, cls in SERVICES.items()}
