"""Networks and environments the simulator runs protocols in: ``links`` (link delay
distributions and application sources, 000 section 6 and 001 section 3), ``topology``
(001's delay per sender-recipient pair, its LAN/WAN parameters and Figure 3's two LANs),
``load`` (per-process load schedules, 001's nine scenarios), ``clocks`` (per-process
clocks with bounded skew and drift, the one clock abstraction), ``timed`` (003's timed
network: clocks within eps, delays within delta, burst loss, join/leave/recover)."""
