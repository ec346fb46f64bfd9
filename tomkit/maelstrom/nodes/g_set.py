#!/usr/bin/env python3
"""A Maelstrom g-set node: a grow-only set replicated by gossip (a state-based CRDT).

Standard library only: it stands for a node written in any language. ``add``
{element} puts the element in the node's set and answers ``add_ok``; ``read`` answers
``read_ok`` {value: every element}; every 0.1 s the node sends its whole set to every
other node (``replicate``), which merges it by union. Union is commutative,
associative and idempotent, so lost, repeated or reordered gossip never matters, and
once a partition heals every node's set converges to the union of all additions
(Shapiro, Preguiça, Baquero and Zawirski, "Conflict-free replicated data types",
SSS 2011, section 3.3).

The set lives in memory only, and an add is acknowledged before it spread: under the
kill nemesis (no disk) an element whose node is killed before its next gossip is lost,
as it would be under Maelstrom. Run it under partitions (as Maelstrom's tutorial does).

With the argument ``local`` it never gossips (a broken node: each node shows only what
it was given, so the acknowledged additions are lost on the others, which
``tomkit run -w g-set`` must find).
"""

import json
import os
import select
import sys
import time

PERIOD = 0.1


def main() -> None:
    local = "local" in sys.argv[1:]
    node_id, peers, elements, next_id = None, [], {}, 0  # elements: JSON text -> value
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
                    peers = [n for n in body["node_ids"] if n != node_id]
                    send(msg["src"], {**reply, "type": "init_ok"})
                elif body["type"] == "add":
                    elements[json.dumps(body["element"], sort_keys=True)] = body["element"]
                    send(msg["src"], {**reply, "type": "add_ok"})
                elif body["type"] == "read":
                    send(msg["src"], {**reply, "type": "read_ok",
                                      "value": list(elements.values())})
                elif body["type"] == "replicate":
                    for e in body["value"]:
                        elements[json.dumps(e, sort_keys=True)] = e
        if time.monotonic() >= due:
            due = time.monotonic() + PERIOD
            if node_id is not None and not local and elements:
                for p in peers:
                    send(p, {"type": "replicate", "value": list(elements.values())})
        sys.stdout.flush()


if __name__ == "__main__":
    main()
