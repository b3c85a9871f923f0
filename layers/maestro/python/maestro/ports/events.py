"""Domain events out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from maestro.domain.events import DomainEvent


class EventBus(Protocol):
    def publish(self, events: Sequence[DomainEvent]) -> None: ...
