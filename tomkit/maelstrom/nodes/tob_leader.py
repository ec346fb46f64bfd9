#!/usr/bin/env python3
"""A total-order broadcast node for Maelstrom: a fixed leader that commits on a majority.

Standard library only (it stands for a node written in any language). Run it under
``tomkit run -w total-order-broadcast`` (or ``-w broadcast``).

The first node of ``node_ids`` is the leader; it appends each broadcast value to its
log and replicates the log to the others; an entry is delivered (committed) once a
majority holds it, as in Raft's log replication (Ongaro and Ousterhout 2014, sections
5.3-5.4) with the leader fixed and the term replaced by an *epoch* that each
incarnation of the leader takes anew:

* a node that is not the leader forwards broadcasts to the leader and forwards them
  again until they show up in its log; it answers ``broadcast_ok`` once the value is
  committed, so an acknowledged value is on a majority;
* entries carry the epoch they were appended in; a follower accepts an append only
  when its prefix matches what it already verified in that epoch, truncating an
  unverified suffix from an older epoch, and acknowledges the verified length with its
  *boot* id (a restarted follower starts empty, and the leader must not count what
  its previous incarnation held);
* the leader commits an entry of its own epoch once a majority holds it (Raft 5.4.2),
  and everything before it with it;
* nodes have no disk, so a leader starts by asking the others for their logs and
  epochs; with answers from enough nodes to meet every majority that committed
  something (n - majority + 1 of them), it takes the most up-to-date log (greatest
  last epoch, then length), a greater epoch, and appends an empty entry of that epoch
  so that the adopted entries get committed.

``read`` answers the committed values in log order: the node's delivered sequence.
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


class TobLeader:
    BATCH = 200

    def __init__(self, node):
        self.node = node
        self.boot = os.urandom(6).hex()
        self.log = []  # [value, epoch]; value None is the leader's empty entry
        self.commit = 0
        self.epoch = 0
        self.verified = 0
        self.waiting = {}  # value -> [msg] awaiting broadcast_ok
        self.forwarding = set()  # values forwarded to the leader, not yet in our log
        self.match, self.boots = {}, {}
        self.recovered = False
        self.recover_answers = {}
        self.queued = []  # broadcasts that reached the leader during recovery
        self.values = set()

    # -- setup -------------------------------------------------------------------------
    def init(self, msg):
        b = msg["body"]
        self.node.id, self.node.nodes = b["node_id"], b["node_ids"]
        self.leader = self.node.nodes[0]
        self.majority = len(self.node.nodes) // 2 + 1
        self.others = [n for n in self.node.nodes if n != self.node.id]
        if self.is_leader() and not self.others:
            self.start_epoch(1, [])
        self.node.every(0.05, self.tick)
        self.node.reply(msg, {"type": "init_ok"})

    def is_leader(self):
        return self.node.id == self.leader

    # -- the leader --------------------------------------------------------------------
    def start_epoch(self, epoch, log):
        self.epoch, self.log = epoch, [list(e) for e in log]
        self.values = {e[0] for e in self.log}
        self.recovered = True
        self.log.append([None, self.epoch])
        for v, msg in self.queued:
            self.append(v, msg)
        self.queued = []
        self.replicate()

    def append(self, v, msg):
        """Append value v (once); msg, a client's request, waits for its commit."""
        if v not in self.values:
            self.values.add(v)
            self.log.append([v, self.epoch])
        if msg is not None:
            self.wait_for(v, msg)

    def replicate(self, only=None):
        for f in [only] if only else self.others:
            start = self.match.get(f, 0)
            self.node.send(f, {"type": "append", "epoch": self.epoch, "start": start,
                               "entries": self.log[start:start + self.BATCH],
                               "commit": self.commit})

    def on_ack(self, msg):
        b = msg["body"]
        if not self.is_leader() or b["epoch"] != self.epoch:
            return
        f = msg["src"]
        if self.boots.get(f) != b["boot"]:
            self.boots[f], self.match[f] = b["boot"], b["length"]
        else:
            self.match[f] = max(self.match.get(f, 0), b["length"])
        lengths = sorted([len(self.log)] + [self.match.get(o, 0) for o in self.others],
                         reverse=True)
        n = lengths[self.majority - 1]
        if n > self.commit and self.log[n - 1][1] == self.epoch:
            self.advance(n)
        if self.match[f] < len(self.log):
            self.replicate(f)

    def on_recover_ok(self, msg):
        if self.recovered:
            return
        self.recover_answers[msg["src"]] = msg["body"]
        if len(self.recover_answers) >= len(self.node.nodes) - self.majority + 1:
            answers = list(self.recover_answers.values())
            best = max(answers, key=lambda a: (a["log"][-1][1] if a["log"] else 0,
                                               len(a["log"])))
            self.start_epoch(max(a["epoch"] for a in answers) + 1, best["log"])

    # -- everyone ----------------------------------------------------------------------
    def wait_for(self, v, msg):
        if any(e[0] == v for e in self.log[:self.commit]):
            self.node.reply(msg, {"type": "broadcast_ok"})
        else:
            self.waiting.setdefault(v, []).append(msg)

    def advance(self, n):
        for v, _ in self.log[self.commit:n]:
            for msg in self.waiting.pop(v, []):
                self.node.reply(msg, {"type": "broadcast_ok"})
            self.forwarding.discard(v)
        self.commit = n

    def on_append(self, msg):
        b = msg["body"]
        if b["epoch"] < self.epoch:
            return
        if b["epoch"] > self.epoch:
            self.epoch, self.verified = b["epoch"], self.commit
        start = b["start"]
        if start <= self.verified:
            for j, e in enumerate(b["entries"]):
                i = start + j
                if i < len(self.log) and self.log[i] != e:
                    del self.log[i:]
                if i >= len(self.log):
                    self.log.append(e)
            self.verified = max(self.verified, start + len(b["entries"]))
            n = min(b["commit"], self.verified)
            if n > self.commit:
                self.advance(n)
        self.node.send(msg["src"], {"type": "ack", "epoch": self.epoch,
                                    "length": self.verified, "boot": self.boot})

    def on_broadcast(self, msg, forwarded=False):
        v = msg["body"]["message"]
        waiter = None if forwarded else msg
        if self.is_leader():
            if self.recovered:
                self.append(v, waiter)
                self.replicate()
            else:
                self.queued.append((v, waiter))
        elif not forwarded:
            self.wait_for(v, msg)
            if v in self.waiting:
                self.forwarding.add(v)
                self.node.send(self.leader, {"type": "fwd", "message": v})

    def on_fwd(self, msg):
        if self.is_leader():
            self.on_broadcast(msg, forwarded=True)

    def tick(self):
        if self.is_leader():
            if not self.recovered:
                for f in self.others:
                    if f not in self.recover_answers:
                        self.node.send(f, {"type": "recover"})
            else:
                self.replicate()
        else:
            have = {e[0] for e in self.log}
            for v in list(self.forwarding):
                if v in have and any(e[0] == v for e in self.log[:self.commit]):
                    self.forwarding.discard(v)
                else:
                    self.node.send(self.leader, {"type": "fwd", "message": v})

    def handle(self, msg):
        t = msg["body"]["type"]
        if t == "init":
            self.init(msg)
        elif t == "topology":
            self.node.reply(msg, {"type": "topology_ok"})
        elif t == "broadcast":
            self.on_broadcast(msg)
        elif t == "read":
            self.node.reply(msg, {"type": "read_ok", "messages": [
                v for v, _ in self.log[:self.commit] if v is not None]})
        elif t == "fwd":
            self.on_fwd(msg)
        elif t == "append":
            self.on_append(msg)
        elif t == "ack":
            self.on_ack(msg)
        elif t == "recover":
            self.node.send(msg["src"], {"type": "recover_ok", "log": self.log,
                                        "epoch": self.epoch})
        elif t == "recover_ok":
            self.on_recover_ok(msg)
        elif "msg_id" in msg["body"] and "in_reply_to" not in msg["body"] and t != "error":
            self.node.reply(msg, {"type": "error", "code": 10, "text": f"no {t}"})


def main():
    node = Node()
    tob = TobLeader(node)
    node.run(tob.handle)


if __name__ == "__main__":
    main()
