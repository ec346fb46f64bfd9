"""JGroups: one JVM per member, with and without SEQUENCER and FLUSH (see :mod:`.recorder`)."""
