"""The single-pass checker: one trace of any length in bounded memory (docs/stream.md).

canon.py decides a trace in one pass over its records with a canonical delivery sequence
and a cursor per process; reduced.py hands what that pass cannot settle to the
properties' exact checks, on the records still held; driver.py reads the files and
fills the same report ``tomkit check`` prints. The properties register their deciders
themselves (``Property.stream``).
"""
