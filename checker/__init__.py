"""Safety properties of total-order multicast, checked over traces."""
