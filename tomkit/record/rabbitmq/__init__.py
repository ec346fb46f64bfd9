"""RabbitMQ streams recorded as a delivery trace: see recorder.py."""
