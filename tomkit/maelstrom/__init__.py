"""A Maelstrom-compatible harness: run any node program under Maelstrom's protocol,
workloads and faults, and judge the run with tomkit's properties (``tomkit run``,
docs/maelstrom.md)."""
