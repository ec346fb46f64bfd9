#!/usr/bin/env python3
"""A Maelstrom kafka node that keeps its logs in a key-value service.

Standard library only. The argument names the service: ``lin-kv`` (the default) or
``seq-kv``. Each key's log is one list in the store (``log/<key>``): a send reads it
and compare-and-sets it to the list with the message appended (again until the cas
succeeds), and the message's offset is its index; a poll reads the list; committed
offsets (``commit/<key>``) only grow, by compare-and-set; listing them reads them.

With ``lin-kv`` this is correct. With ``seq-kv`` it is the node that trusts a
sequentially consistent store as if it were linearizable: the cas loops are still
right (a cas sees the latest value), but a read may return a past state, so a node can
list a committed offset older than one whose commit was already acknowledged: the
committed offsets go back, which ``tomkit run -w kafka`` must find.
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


class KvKafka:
    def __init__(self, node, service):
        self.node, self.service = node, service
        self.calls = {}  # msg_id -> callback(reply body)

    def rpc(self, body, then):
        self.node.next_id += 1
        body["msg_id"] = self.node.next_id
        self.calls[self.node.next_id] = then
        self.node.send(self.service, body)

    def read(self, key, then):
        """then(value or None when the key does not exist)"""
        def got(b):
            if b["type"] == "read_ok":
                then(b["value"])
            elif b.get("code") == 20:
                then(None)
            else:
                self.read(key, then)  # indefinite: ask again
        self.rpc({"type": "read", "key": key}, got)

    def cas(self, key, old, new, then):
        """then(True) when the cas took effect, then(False) when it did not"""
        body = {"type": "cas", "key": key, "from": old, "to": new}
        if old is None:
            body.update({"from": new, "create_if_not_exists": True})
        self.rpc(body, lambda b: then(b["type"] == "cas_ok"))

    # -- kafka -------------------------------------------------------------------------
    def send(self, msg):
        key, m = msg["body"]["key"], msg["body"]["msg"]

        def attempt(log):
            old = log if log is not None else None
            new = (log or []) + [m]
            if old is None:
                # create the log only if it is still missing: a cas from a value nobody
                # could have written, with create_if_not_exists
                body = {"type": "cas", "key": "log/" + key, "from": [None],
                        "to": new, "create_if_not_exists": True}
                self.rpc(body, lambda b: done(b, new))
            else:
                self.cas("log/" + key, old, new, lambda ok: finish(ok, new))

        def done(b, new):
            finish(b["type"] == "cas_ok", new)

        def finish(ok, new):
            if ok:
                self.node.reply(msg, {"type": "send_ok", "offset": len(new) - 1})
            else:
                self.read("log/" + key, attempt)

        self.read("log/" + key, attempt)

    def poll(self, msg):
        want = msg["body"]["offsets"]
        out, left = {}, [len(want)]
        if not want:
            self.node.reply(msg, {"type": "poll_ok", "msgs": {}})

        def got(key, start, log):
            if log:
                pairs = [[i, log[i]] for i in range(start, min(len(log), start + 50))]
                if pairs:
                    out[key] = pairs
            left[0] -= 1
            if left[0] == 0:
                self.node.reply(msg, {"type": "poll_ok", "msgs": out})

        for key, start in want.items():
            self.read("log/" + key, lambda log, k=key, s=start: got(k, s, log))

    def commit(self, msg):
        offsets = msg["body"]["offsets"]
        left = [len(offsets)]
        if not offsets:
            self.node.reply(msg, {"type": "commit_offsets_ok"})

        def raise_to(key, o, cur):
            if cur is not None and cur >= o:
                one_done()
            else:
                self.cas("commit/" + key, cur, o,
                         lambda ok: one_done() if ok else
                         self.read("commit/" + key, lambda c: raise_to(key, o, c)))

        def one_done():
            left[0] -= 1
            if left[0] == 0:
                self.node.reply(msg, {"type": "commit_offsets_ok"})

        for key, o in offsets.items():
            self.read("commit/" + key, lambda c, k=key, o=o: raise_to(k, o, c))

    def list_committed(self, msg):
        keys = msg["body"]["keys"]
        out, left = {}, [len(keys)]
        if not keys:
            self.node.reply(msg, {"type": "list_committed_offsets_ok", "offsets": {}})

        def got(key, c):
            if c is not None:
                out[key] = c
            left[0] -= 1
            if left[0] == 0:
                self.node.reply(msg, {"type": "list_committed_offsets_ok", "offsets": out})

        for key in keys:
            self.read("commit/" + key, lambda c, k=key: got(k, c))

    def handle(self, msg):
        b = msg["body"]
        t = b["type"]
        if "in_reply_to" in b and b["in_reply_to"] in self.calls:
            self.calls.pop(b["in_reply_to"])(b)
        elif t == "init":
            self.node.id, self.node.nodes = b["node_id"], b["node_ids"]
            self.node.reply(msg, {"type": "init_ok"})
        elif t == "send":
            self.send(msg)
        elif t == "poll":
            self.poll(msg)
        elif t == "commit_offsets":
            self.commit(msg)
        elif t == "list_committed_offsets":
            self.list_committed(msg)


def main():
    service = next((a for a in sys.argv[1:] if a.endswith("-kv")), "lin-kv")
    node = Node()
    node.run(KvKafka(node, service).handle)


if __name__ == "__main__":
    main()
