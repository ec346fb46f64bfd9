#!/usr/bin/env python3
"""A *broken* Maelstrom kafka node: single-node logic run on several nodes.

Standard library only. Each node keeps its own logs, offsets, and committed offsets,
and tells no one: right on one node (``--node-count 1``), wrong on three, where two
nodes give the same offset of a key to two different messages and a reader never sees
what was sent through another node. ``tomkit run -w kafka --node-count 3`` must find
inconsistent offsets (and lost writes).
"""

import json
import os
import select
import sys
import time


class Node:
    def __init__(self):
        self.id = None
        self.nodes = []
        self.next_id = 0
        self.buf = b""
        self.timers = []  # (due, period, fn)

    def send(self, dest, body):
        sys.stdout.write(json.dumps({"src": self.id, "dest": dest, "body": body}) + "\n")

    def reply(self, msg, body):
        self.next_id += 1
        body["msg_id"] = self.next_id
        body["in_reply_to"] = msg["body"].get("msg_id")
        self.send(msg["src"], body)

    def every(self, period, fn):
        self.timers.append([time.monotonic() + period, period, fn])

    def run(self, handle):
        while True:
            now = time.monotonic()
            wait = min((t[0] for t in self.timers), default=now + 1.0) - now
            ready, _, _ = select.select([0], [], [], max(0.0, wait))
            if ready:
                chunk = os.read(0, 1 << 16)
                if not chunk:
                    return
                self.buf += chunk
                *lines, self.buf = self.buf.split(b"\n")
                for line in lines:
                    if line.strip():
                        handle(json.loads(line))
            now = time.monotonic()
            for t in self.timers:
                if t[0] <= now and self.id is not None:
                    t[0] = now + t[1]
                    t[2]()
            sys.stdout.flush()


class LocalKafka:
    def __init__(self, node):
        self.node = node
        self.logs, self.committed = {}, {}

    def handle(self, msg):
        b = msg["body"]
        t = b["type"]
        if t == "init":
            self.node.id, self.node.nodes = b["node_id"], b["node_ids"]
            self.node.reply(msg, {"type": "init_ok"})
        elif t == "send":
            log = self.logs.setdefault(b["key"], [])
            log.append(b["msg"])
            self.node.reply(msg, {"type": "send_ok", "offset": len(log) - 1})
        elif t == "poll":
            out = {}
            for key, start in b["offsets"].items():
                log = self.logs.get(key, [])
                pairs = [[i, log[i]] for i in range(start, min(len(log), start + 50))]
                if pairs:
                    out[key] = pairs
            self.node.reply(msg, {"type": "poll_ok", "msgs": out})
        elif t == "commit_offsets":
            for key, o in b["offsets"].items():
                self.committed[key] = max(o, self.committed.get(key, -1))
            self.node.reply(msg, {"type": "commit_offsets_ok"})
        elif t == "list_committed_offsets":
            self.node.reply(msg, {"type": "list_committed_offsets_ok", "offsets": {
                k: self.committed[k] for k in b["keys"] if k in self.committed}})


def main():
    node = Node()
    node.run(LocalKafka(node).handle)


if __name__ == "__main__":
    main()
