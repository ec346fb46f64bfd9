"""etcd (Raft): puts as sends, watches as deliveries (see :mod:`.recorder`)."""
