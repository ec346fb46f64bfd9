"""tomkit: formal models and conformance checking for totally ordered multicast."""

__version__ = "0.1.0"
