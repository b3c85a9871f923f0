"""Domain events on EventBridge: always published, in every environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from maestro.domain.events import DomainEvent

if TYPE_CHECKING:
    from mypy_boto3_events.client import EventBridgeClient
else:
    EventBridgeClient = Any

EVENT_SOURCE = "maestro"
_BATCH = 10  # PutEvents takes at most 10 entries


class FailedPublishError(RuntimeError):
    """EventBridge refused some entries; the step fails and its retry republishes (same ids)."""


class EventBridgeBus:
    """:class:`maestro.ports.events.EventBus`."""

    def __init__(self, client: EventBridgeClient, bus_name: str) -> None:
        self._events = client
        self._bus = bus_name

    def publish(self, events: Sequence[DomainEvent]) -> None:
        for start in range(0, len(events), _BATCH):
            batch = events[start : start + _BATCH]
            response = self._events.put_events(
                Entries=[
                    {
                        "EventBusName": self._bus,
                        "Source": EVENT_SOURCE,
                        "DetailType": event.type,
                        "Detail": event.model_dump_json(),
                        "Time": event.occurred_at,
                    }
                    for event in batch
                ]
            )
            if response.get("FailedEntryCount"):
                raise FailedPublishError(f"{response['FailedEntryCount']} event(s) not published")


class NoBus:
    """:class:`maestro.ports.events.EventBus` for a function whose settings name no bus (a step that
    publishes nothing, ``maestro.access.EVENT_PUBLISHERS``): publishing is a wiring error,
    said plainly; publishing nothing is fine."""

    def __init__(self, function: str) -> None:
        self._function = function

    def publish(self, events: Sequence[DomainEvent]) -> None:
        if events:
            raise RuntimeError(
                f"{self._function} published {len(events)} event(s) but its settings name no "
                "event bus: add it to maestro.access.EVENT_PUBLISHERS"
            )
