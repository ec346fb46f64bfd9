"""Corosync CPG (Totem): libcpg clients in network namespaces (see :mod:`.recorder`)."""
