"""A virtual clock: scenarios and tests move time forward, so a 5-minute idle gap costs nothing."""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from maestro.ports.workflows import DebounceSignal


class VirtualClock:
    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("the virtual clock needs a timezone-aware start")
        self._now = start
        self._listeners: list[Callable[[], None]] = []

    def now(self) -> datetime:
        return self._now

    def listen(self, moved: Callable[[], None]) -> Callable[[], None]:
        """Call ``moved`` whenever time is set or advanced (what waits on virtual time wakes
        on); returns what stops it."""
        self._listeners.append(moved)
        return lambda: self._listeners.remove(moved)

    def advance(self, seconds: float) -> datetime:
        if seconds < 0:
            raise ValueError("time only moves forward")
        self._now += timedelta(seconds=seconds)
        self._moved()
        return self._now

    def set(self, moment: datetime) -> None:
        if moment < self._now:
            raise ValueError("time only moves forward")
        self._now = moment
        self._moved()

    def _moved(self) -> None:
        for moved in list(self._listeners):
            moved()


class VirtualDelayQueue:
    """The debounce queue in virtual time (the DebounceQueue port): a signal sent with a delay
    comes out of :meth:`due` once the virtual clock reaches it, in send order among equals.

    SQS's DelaySeconds runs on wall-clock time, so the embedded stack and the ingestion tests
    hold signals here and hand them on (to SQS, or straight to the flusher) when they fall due.
    """

    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock
        self._heap: list[tuple[datetime, int, DebounceSignal]] = []
        self._order = itertools.count()
        self._lock = threading.Lock()
        self.sent: list[tuple[DebounceSignal, int]] = []

    def send(self, signal: DebounceSignal, delay_seconds: int) -> None:
        with self._lock:
            self.sent.append((signal, delay_seconds))
            due = self._clock.now() + timedelta(seconds=delay_seconds)
            heapq.heappush(self._heap, (due, next(self._order), signal))

    def due(self) -> list[DebounceSignal]:
        """Every signal whose time has come, removed from the queue, in order."""
        out = []
        with self._lock:
            while self._heap and self._heap[0][0] <= self._clock.now():
                out.append(heapq.heappop(self._heap)[2])
        return out

    def next_due(self) -> datetime | None:
        with self._lock:
            return self._heap[0][0] if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)
