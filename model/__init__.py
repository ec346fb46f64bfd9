"""Executable reference models of the protocols (later issues)."""
