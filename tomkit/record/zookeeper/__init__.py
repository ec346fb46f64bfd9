"""ZooKeeper (ZAB) recorded as a delivery trace: see recorder.py."""
