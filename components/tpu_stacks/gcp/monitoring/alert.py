"""An alert policy as data: what alerts.py, a workload's descriptor (capabilities.py) and the Ray Serve
section (rayserve.py) build and component.py declares. Its own module so that each of them can build one
without importing the others (alerts.py gathers theirs).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Alert:
    id: str
    title: str
    query: str
    minutes: int
    severity: str
    why: str
    """The documentation a responder reads: what fired and what to check first."""
    default_on: bool = True
    noisy_because: str = ""
    enabled: bool = True

    @property
    def duration(self) -> str:
        return f"{self.minutes * 60}s"
