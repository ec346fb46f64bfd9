#!/usr/bin/env python3
"""A Maelstrom g-counter node over the ``seq-kv`` service (Gossip Glomers' challenge #4).

Standard library only: it stands for a node written in any language. The counter is
one key of seq-kv. ``add`` {delta} reads the key and compare-and-sets it from what it
read to that plus delta, again until the cas succeeds (a cas compares with the latest
value, so no add is lost); ``read`` first writes a key of its own (an update moves the
caller to the latest state of a sequentially consistent store), then reads the
counter, so a read sees every add that completed before it began.

With the argument ``trusting`` it trusts seq-kv as if it were linearizable: an add
reads the key and writes the sum back (no cas), and a read reads the key with no write
first. A stale read then makes an add overwrite other adds, which are lost for good:
the final reads fall short of the acknowledged adds, which ``tomkit run -w g-counter``
must find.
"""

import json
import os
import select
import sys

KEY, SERVICE = "counter", "seq-kv"


def main() -> None:
    trusting = "trusting" in sys.argv[1:]
    node_id, next_id, buf = None, 0, b""
    calls = {}  # msg_id -> the callback of its reply's body

    def send(dest, body):
        sys.stdout.write(json.dumps({"src": node_id, "dest": dest, "body": body}) + "\n")

    def rpc(body, then):
        nonlocal next_id
        next_id += 1
        calls[next_id] = then
        send(SERVICE, {**body, "msg_id": next_id})

    def reply(msg, body):
        nonlocal next_id
        next_id += 1
        send(msg["src"], {**body, "msg_id": next_id, "in_reply_to": msg["body"]["msg_id"]})

    def read_counter(then):
        """then(the counter's value, 0 when the key does not exist yet)"""
        def got(b):
            if b["type"] == "read_ok":
                then(b["value"])
            elif b.get("code") == 20:
                then(0)
            else:
                read_counter(then)  # indefinite: ask again
        rpc({"type": "read", "key": KEY}, got)

    def add(msg):
        delta = msg["body"]["delta"]

        def attempt(value):
            if trusting:
                rpc({"type": "write", "key": KEY, "value": value + delta},
                    lambda b: reply(msg, {"type": "add_ok"}))
            else:
                rpc({"type": "cas", "key": KEY, "from": value, "to": value + delta,
                     "create_if_not_exists": True},
                    lambda b: reply(msg, {"type": "add_ok"}) if b["type"] == "cas_ok"
                    else read_counter(attempt))
        read_counter(attempt)

    def read(msg):
        def answer(value):
            reply(msg, {"type": "read_ok", "value": value})
        if trusting:
            read_counter(answer)
        else:
            rpc({"type": "write", "key": f"sync-{node_id}", "value": next_id},
                lambda b: read_counter(answer))

    while True:
        select.select([0], [], [])
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            msg = json.loads(line)
            b = msg["body"]
            if b.get("in_reply_to") in calls:
                calls.pop(b["in_reply_to"])(b)
            elif b["type"] == "init":
                node_id = b["node_id"]
                reply(msg, {"type": "init_ok"})
            elif b["type"] == "add":
                add(msg)
            elif b["type"] == "read":
                read(msg)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
