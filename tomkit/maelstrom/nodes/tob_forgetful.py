#!/usr/bin/env python3
"""A *broken* total-order broadcast node: a sequencer that forgets its counter on
restart.

Standard library only. The first node of ``node_ids`` is the sequencer: it numbers
each value it hears of 0, 1, 2, ... and sends (number, value) to every node, again on
every tick; the others forward broadcasts to it until they see them numbered, and
deliver in number order, waiting for gaps. Without faults and under partitions this is
a correct total-order broadcast. But a sequencer has no disk: killed and restarted
(``--nemesis kill``), it starts numbering from 0 again, so one number names two values
and the restarted sequencer delivers a sequence no other node has. ``tomkit run -w
total-order-broadcast --nemesis kill`` must find prefix-order violated once the
sequencer is killed.
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


class Sequencer:
    def __init__(self, node):
        self.node = node
        self.counter = 0  # the sequencer's next number: lost on restart (the bug)
        self.numbered = {}  # number -> value (the first value heard for that number)
        self.numbers = {}  # value -> number
        self.delivered = []
        self.pending = {}  # value -> client requests awaiting broadcast_ok

    def is_sequencer(self):
        return self.node.id == self.node.nodes[0]

    def number(self, v):
        if v not in self.numbers:
            self.learn(self.counter, v)
            self.counter += 1
            self.announce()

    def learn(self, k, v):
        if k in self.numbered or v in self.numbers:
            return
        self.numbered[k], self.numbers[v] = v, k
        while len(self.delivered) in self.numbered:
            w = self.numbered[len(self.delivered)]
            self.delivered.append(w)
            for msg in self.pending.pop(w, []):
                self.node.reply(msg, {"type": "broadcast_ok"})

    def announce(self):
        table = sorted(self.numbered.items())
        for p in self.node.nodes:
            if p != self.node.id:
                self.node.send(p, {"type": "numbered", "table": table})

    def tick(self):
        if self.is_sequencer():
            self.announce()
        else:
            for v in self.pending:
                self.node.send(self.node.nodes[0], {"type": "fwd", "message": v})

    def handle(self, msg):
        b = msg["body"]
        t = b["type"]
        if t == "init":
            self.node.id, self.node.nodes = b["node_id"], b["node_ids"]
            self.node.every(0.1, self.tick)
            self.node.reply(msg, {"type": "init_ok"})
        elif t == "topology":
            self.node.reply(msg, {"type": "topology_ok"})
        elif t == "broadcast":
            v = b["message"]
            if v in self.delivered:
                self.node.reply(msg, {"type": "broadcast_ok"})
                return
            self.pending.setdefault(v, []).append(msg)
            if self.is_sequencer():
                self.number(v)
            else:
                self.node.send(self.node.nodes[0], {"type": "fwd", "message": v})
        elif t == "fwd" and self.is_sequencer():
            self.number(b["message"])
        elif t == "numbered":
            for k, v in b["table"]:
                self.learn(k, v)
        elif t == "read":
            self.node.reply(msg, {"type": "read_ok", "messages": list(self.delivered)})


def main():
    node = Node()
    node.run(Sequencer(node).handle)


if __name__ == "__main__":
    main()
