#!/usr/bin/env python3
"""A *broken* total-order broadcast node: gossip without ordering.

Standard library only. Every node appends a value to its sequence when it first
hears of it (from a client or from another node) and tells every other node, again
and again until they confirm; reads return the sequence in arrival order. Every value
reaches every node (broadcast's validity and agreement hold after healing), but two
nodes that hear of two values in different orders deliver them in different orders:
``tomkit run -w total-order-broadcast`` must find prefix-order violated, while ``-w
broadcast`` (sets) must find it valid.
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


class Gossip:
    def __init__(self, node):
        self.node = node
        self.seq, self.have = [], set()
        self.unconfirmed = {}  # peer -> values it has not confirmed

    def learn(self, v):
        if v not in self.have:
            self.have.add(v)
            self.seq.append(v)
            for p in self.unconfirmed:
                self.unconfirmed[p].add(v)
                self.node.send(p, {"type": "gossip", "values": [v]})

    def tick(self):
        for p, vs in self.unconfirmed.items():
            if vs:
                self.node.send(p, {"type": "gossip", "values": sorted(vs, key=str)})

    def handle(self, msg):
        b = msg["body"]
        t = b["type"]
        if t == "init":
            self.node.id, self.node.nodes = b["node_id"], b["node_ids"]
            self.unconfirmed = {p: set() for p in self.node.nodes if p != self.node.id}
            self.node.every(0.1, self.tick)
            self.node.reply(msg, {"type": "init_ok"})
        elif t == "topology":
            self.node.reply(msg, {"type": "topology_ok"})
        elif t == "broadcast":
            self.learn(b["message"])
            self.node.reply(msg, {"type": "broadcast_ok"})
        elif t == "read":
            self.node.reply(msg, {"type": "read_ok", "messages": list(self.seq)})
        elif t == "gossip":
            for v in b["values"]:
                self.learn(v)
            self.node.send(msg["src"], {"type": "gossip_ok", "values": b["values"]})
        elif t == "gossip_ok":
            self.unconfirmed[msg["src"]].difference_update(b["values"])


def main():
    node = Node()
    node.run(Gossip(node).handle)


if __name__ == "__main__":
    main()
