"""Example Maelstrom node programs, each a standalone Python 3 program using only the
standard library (they stand for nodes written in any language and import nothing of
tomkit): run them with ``tomkit run --bin python3 tomkit/maelstrom/nodes/NAME.py``."""
