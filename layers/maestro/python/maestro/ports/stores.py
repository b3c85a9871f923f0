"""The stores maestro keeps its memory in: decisions, state snapshots, work orders, timelines,
pending items, the party directory, dispatch runs; and the conflicts a conditional write loses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from maestro.domain.common import AwareDatetime
from maestro.domain.models import Party, WorkOrder

if TYPE_CHECKING:
    from datetime import datetime

    # Named only in the Protocols' signatures: importing them here would load the memory window
    # and the decision records into every handler, the inbound webhook included.
    from maestro.domain.directory import OnCall, Person, Property, Trade, Unit, Vendor
    from maestro.domain.dispatch import DispatchRun
    from maestro.domain.records import (
        ActionOutcomeRecord,
        MaestroDecision,
        MaestroState,
        PackageCompletion,
        PendingClarification,
        PendingConfirmation,
        SweepMark,
    )
    from maestro.domain.timeline import TimelineEntry


class ConflictError(Exception):
    """A conditional write lost: the item already exists or changed since it was read."""


class AlreadyExistsError(ConflictError):
    """An append-only or create-once item is already there."""


class StaleVersionError(ConflictError):
    """An optimistic-concurrency write saw a different version than expected."""


class DecisionLog(Protocol):
    """Append-only: there is deliberately no update or delete."""

    def append(self, decision: MaestroDecision) -> None:
        """Raises AlreadyExistsError when the decision id is already recorded."""

    def get(self, package_id: str, decision_id: str) -> MaestroDecision | None: ...

    def for_package(self, package_id: str) -> list[MaestroDecision]: ...

    def recent(self, conversation_id: str, limit: int) -> list[MaestroDecision]: ...

    def record_outcome(self, outcome: ActionOutcomeRecord) -> bool:
        """Append what became of a queued action; False when it is already recorded."""

    def outcomes_for(
        self, package_id: str, *, consistent: bool = True
    ) -> list[ActionOutcomeRecord]:
        """The package's recorded outcomes, by action index. ``consistent=False`` (half the
        read units) only for a package completed long enough ago that every write is visible."""

    def complete(self, completion: PackageCompletion) -> bool:
        """Append the package's completion line; False when it is already recorded."""

    def completion_for(self, package_id: str) -> PackageCompletion | None: ...

    def completed_between(
        self,
        start: AwareDatetime,
        end: AwareDatetime,
        *,
        after: SweepMark | None = None,
        limit: int | None = None,
        unsharded: bool = True,
    ) -> list[PackageCompletion]:
        """Packages whose completion line was recorded in [start, end), oldest first (by time,
        then package id); with ``after``, only those past that mark; at most ``limit``;
        ``unsharded=False`` skips the lines written before the index was sharded."""


class StateStore(Protocol):
    def get(self, wo_id: str) -> MaestroState | None: ...

    def put(self, state: MaestroState, expected_version: int | None) -> None:
        """Write ``state`` if the stored version is ``expected_version`` (None: no item yet).

        ``state.version`` must be ``expected_version + 1`` (1 for a new item). Raises
        StaleVersionError otherwise.
        """


class WorkOrderStore(Protocol):
    def get(self, wo_id: str) -> WorkOrder | None: ...

    def create(self, wo: WorkOrder) -> None:
        """Raises AlreadyExistsError if the id exists."""

    def update(self, wo: WorkOrder, expected_version: int) -> None:
        """Raises StaleVersionError unless the stored version is ``expected_version``."""

    def open_for_party(self, party_id: str) -> list[WorkOrder]:
        """The party's WOs still in conversation: open, or completed awaiting a rating."""

    def open_for_property(self, property_id: str, limit: int) -> tuple[list[WorkOrder], int]:
        """Up to ``limit`` of the property's open WOs (by id), and how many it has open in all."""


class Timeline(Protocol):
    """Each WO's timeline: typed entries, create-once, read back by WO or by entry id."""

    def append(self, entry: TimelineEntry) -> bool:
        """Add ``entry`` unless its id is there already (a re-run): False then, nothing changed."""

    def get(self, wo_id: str, entry_id: str) -> TimelineEntry | None: ...

    def for_wo(self, wo_id: str) -> list[TimelineEntry]:
        """The WO's entries, oldest first."""


PendingKind = Literal["clarification", "confirmation"]


class PendingStore(Protocol):
    def put_clarification(self, item: PendingClarification) -> None: ...

    def put_confirmation(self, item: PendingConfirmation) -> None:
        """Create once; raises AlreadyExistsError if the id exists."""

    def clarifications_for(self, party_id: str, now: AwareDatetime) -> list[PendingClarification]:
        """Open, unexpired clarifications for the party, oldest first."""

    def confirmations_for(self, party_id: str, now: AwareDatetime) -> list[PendingConfirmation]:
        """Unexpired confirmations still held for the party, oldest first."""

    def open_items(
        self, party_id: str
    ) -> tuple[list[PendingClarification], list[PendingConfirmation]]:
        """Every clarification still open and confirmation still held, expired or not (so the
        expiry can be recorded), oldest first."""

    def set_status(
        self,
        kind: PendingKind,
        pending_id: str,
        expected: str,
        status: str,
        closed_by: str | None = None,
    ) -> None:
        """Move an item on from ``expected``; raises StaleVersionError if it is not there."""

    def set_confirmation_status(self, confirmation_id: str, expected: str, status: str) -> None:
        """Move a held confirmation on; raises StaleVersionError if it is not ``expected``."""

    def get(
        self, kind: PendingKind, pending_id: str
    ) -> PendingClarification | PendingConfirmation | None:
        """Any stored item, whatever its status or expiry."""


class PartyDirectory(Protocol):
    def by_phone(self, phone: str) -> Party | None: ...

    def by_party_id(self, party_id: str) -> Party | None: ...

    def put(self, party: Party) -> None: ...


class DirectoryReader(Protocol):
    """What the pipeline reads of the directory (docs/directory.md)."""

    def person(self, person_id: str) -> Person | None: ...

    def vendor(self, vendor_id: str) -> Vendor | None: ...

    def property(self, property_id: str) -> Property | None: ...

    def unit(self, unit_id: str) -> Unit | None: ...

    def on_call_at(self, property_id: str | None, at: datetime) -> OnCall | None: ...

    def managers_of(self, property_id: str | None) -> list[Person]:
        """The PMs managing ``property_id`` or every property (``*``); None: only the latter."""
        ...

    def vendors_for(
        self, property_id: str | None, trade: Trade, *, after_hours: bool = False
    ) -> list[Vendor]: ...


class DispatchStore(Protocol):
    """Each work order's dispatch run (maestro.domain.dispatch): one record per WO, versioned."""

    def get(self, wo_id: str) -> DispatchRun | None: ...

    def put(self, run: DispatchRun, expected_version: int | None) -> None:
        """Create (``expected_version`` None: raises AlreadyExistsError if there) or replace the
        stored ``expected_version`` (raises StaleVersionError otherwise)."""

    def waiting_for(self, party_id: str) -> list[DispatchRun]:
        """The runs whose open wait is for ``party_id``'s answer (the sparse index), by WO id."""
