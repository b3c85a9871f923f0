"""A virtual clock: scenarios and tests move time forward, so a 5-minute idle gap costs nothing."""

from __future__ import annotations

from datetime import datetime, timedelta


class VirtualClock:
    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("the virtual clock needs a timezone-aware start")
        self._now = start

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> datetime:
        if seconds < 0:
            raise ValueError("time only moves forward")
        self._now += timedelta(seconds=seconds)
        return self._now

    def set(self, moment: datetime) -> None:
        if moment < self._now:
            raise ValueError("time only moves forward")
        self._now = moment
