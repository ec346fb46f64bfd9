"""ABCAST (Skeen; Birman and Joseph) and TOMP (Dasser, 004): ``abcast`` (the base
protocol, with the hooks TOMP overrides), ``tomp``. Specified in ``specs/ABCAST/`` and
``specs/TOMP/``."""
