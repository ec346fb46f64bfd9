#!/usr/bin/env python3
"""A Maelstrom unique-ids node: answers ``generate`` with an id no other node, and no
other run of this node, ever gives.

Standard library only: it stands for a node written in any language. An id is the
node's id, a random nonce drawn when the process starts (a node killed and restarted
has no disk, so its counter starts again from zero) and a counter: unique across
nodes, restarts and partitions, with no message between nodes.

With the argument ``counter`` it answers with its counter alone (a broken node: two
nodes hand out the same ids, which ``tomkit run -w unique-ids`` must find).
"""

import json
import secrets
import sys


def main() -> None:
    counter_only = "counter" in sys.argv[1:]
    nonce = secrets.token_hex(8)
    node_id, next_id, count = None, 0, 0
    for line in sys.stdin:
        msg = json.loads(line)
        body = msg["body"]
        next_id += 1
        reply = {"msg_id": next_id, "in_reply_to": body.get("msg_id")}
        if body["type"] == "init":
            node_id = body["node_id"]
            reply["type"] = "init_ok"
            print(f"{node_id} generates ids {node_id}-{nonce}-N", file=sys.stderr, flush=True)
        elif body["type"] == "generate":
            count += 1
            reply.update(type="generate_ok",
                         id=count if counter_only else f"{node_id}-{nonce}-{count}")
        else:
            reply.update(type="error", code=10, text=f"no {body['type']}")
        sys.stdout.write(json.dumps({"src": node_id, "dest": msg["src"], "body": reply}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
