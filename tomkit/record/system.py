"""What a recorder declares it provides: its runs, the faults it can inflict, whether it
has long runs, and the guarantee its runs are checked under. Each recorder module ends
with one ``SYSTEM = System(...)``; ``python -m tomkit.record`` reads only that, so no
capability is found by probing a module's attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["System"]


@dataclass(frozen=True)
class System:
    """One recorded system.

    ``runs``: the standard runs by name (``clean`` among them); ``actions``: the fault
    actions the recorder can inflict (``tomkit/record/faults.py``); ``long_runs``: its
    run shape has ``send_for`` and ``period``, so ``--long`` can build a run of the
    repeating schedule from ``clean``; ``profile``: a built-in profile's name, or
    ``profile_file(run)``, the guarantee file a run is checked under; ``boot``: where
    booting the system is most of a run's cost, ``boot(timeout=...)`` is a context
    manager of a booted system that several runs share (``record(..., boot=b)``)."""

    name: str
    runs: Mapping[str, Any]
    actions: tuple[str, ...]
    record: Callable[..., Any]
    available: Callable[[], str | None]
    profile: str | None = None
    profile_file: Callable[[Any], Path] | None = None
    long_runs: bool = False
    boot: Callable[..., AbstractContextManager[Any]] | None = None

    def __post_init__(self) -> None:
        if (self.profile is None) == (self.profile_file is None):
            raise ValueError(f"{self.name}: declare a profile or a profile file, one of them")

    def guarantee(self, run: Any) -> list[str]:
        """The ``tomkit check`` arguments naming the guarantee ``run`` is judged under."""
        if self.profile_file is not None:
            return ["--guarantee-file", str(self.profile_file(run))]
        assert self.profile is not None
        return ["--guarantee", self.profile]
