"""NATS JetStream recorded as a delivery trace: see recorder.py."""
