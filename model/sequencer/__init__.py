"""The classic fixed-sequencer total-order broadcast (Défago, Schiper and Urbán 2004,
section 4.1), broadcast-broadcast (BB) variant, with a view change on the sequencer's
crash: ``process`` (the process and its packets), ``protocol`` (its description, replay
and figures). Specified in ``specs/Sequencer/``; docs/sequencer.md."""
