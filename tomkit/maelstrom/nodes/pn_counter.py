#!/usr/bin/env python3
"""A Maelstrom pn-counter (and g-counter) node: a counter replicated by gossip, as a
state-based CRDT.

Standard library only: it stands for a node written in any language. The state is two
maps from node id to a count that only grows: P, the increments each node was given,
and N, its decrements (Shapiro, Preguiça, Baquero and Zawirski, "Conflict-free
replicated data types", SSS 2011, section 3.1, the PN-Counter). ``add`` {delta} adds
delta to P[self] (or -delta to N[self]); ``read`` answers the sum of P minus the sum
of N; every 0.1 s the node sends both maps to every other node, which merges them
entry by entry with max. Each entry only grows, so max never forgets an update, and
after a partition heals every node converges to the sum of all applied deltas.

With the argument ``max-merge`` it keeps one signed total per node and merges by max
(a G-counter's merge used for a counter that also decrements: a decrement lowers the
node's total, every other node keeps the higher old one, and the owner takes it back
at the next gossip; the decrements are lost, which ``tomkit run -w pn-counter`` must
find, as Maelstrom's counter tutorial shows).

The state lives in memory only: under the kill nemesis a restarted node's own entries
start again from zero, and the adds it takes before the others' gossip brings its old
entries back are hidden by them. Run it under partitions (as Maelstrom's tutorial does).
"""

import json
import os
import select
import sys
import time

PERIOD = 0.1


def main() -> None:
    max_merge = "max-merge" in sys.argv[1:]
    node_id, peers, next_id = None, [], 0
    p: dict[str, int] = {}
    n: dict[str, int] = {}  # max-merge: the signed totals are kept in p alone
    buf, due = b"", time.monotonic() + PERIOD

    def send(dest, body):
        sys.stdout.write(json.dumps({"src": node_id, "dest": dest, "body": body}) + "\n")

    while True:
        ready, _, _ = select.select([0], [], [], max(0.0, due - time.monotonic()))
        if ready:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                return
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                msg = json.loads(line)
                body = msg["body"]
                next_id += 1
                reply = {"msg_id": next_id, "in_reply_to": body.get("msg_id")}
                if body["type"] == "init":
                    node_id = body["node_id"]
                    peers = [x for x in body["node_ids"] if x != node_id]
                    send(msg["src"], {**reply, "type": "init_ok"})
                elif body["type"] == "add":
                    d = body["delta"]
                    side = n if d < 0 and not max_merge else p
                    side[node_id] = side.get(node_id, 0) + (abs(d) if side is n else d)
                    send(msg["src"], {**reply, "type": "add_ok"})
                elif body["type"] == "read":
                    send(msg["src"], {**reply, "type": "read_ok",
                                      "value": sum(p.values()) - sum(n.values())})
                elif body["type"] == "replicate":
                    for mine, theirs in ((p, body["p"]), (n, body["n"])):
                        for k, v in theirs.items():
                            mine[k] = max(mine.get(k, v), v)
        if time.monotonic() >= due:
            due = time.monotonic() + PERIOD
            if node_id is not None:
                for peer in peers:
                    send(peer, {"type": "replicate", "p": p, "n": n})
        sys.stdout.flush()


if __name__ == "__main__":
    main()
