#!/usr/bin/env python3
"""A Maelstrom echo node: answers ``echo`` with ``echo_ok`` carrying the same payload.

Standard library only: it stands for a node written in any language.
With the argument ``wrong`` it answers the first request and every fifth after it with
another payload (a broken node the checks must catch, from its first answer on).
"""

import json
import sys


def main() -> None:
    wrong = "wrong" in sys.argv[1:]
    node_id = None
    next_id = 0
    for line in sys.stdin:
        msg = json.loads(line)
        body = msg["body"]
        next_id += 1
        reply = {"msg_id": next_id, "in_reply_to": body.get("msg_id")}
        if body["type"] == "init":
            node_id = body["node_id"]
            reply["type"] = "init_ok"
            print(f"{node_id} initialised", file=sys.stderr, flush=True)
        elif body["type"] == "echo":
            reply["type"] = "echo_ok"
            reply["echo"] = body["echo"] + " (changed)" if wrong and next_id % 5 == 2 \
                else body["echo"]
        else:
            reply.update(type="error", code=10, text=f"no {body['type']}")
        sys.stdout.write(json.dumps({"src": node_id, "dest": msg["src"], "body": reply}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
