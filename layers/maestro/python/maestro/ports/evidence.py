"""Reading what was done back from where it was done: the message reader, the ledger of
Evidence and Shame rows, the sweeper's watermark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import Field

from maestro.domain.common import AwareDatetime, Frozen

if TYPE_CHECKING:
    # Named only in the Protocols' signatures: importing them here would load the memory window
    # and the decision records into every handler, the inbound webhook included.
    from maestro.domain.ledger import LedgerRow, Resolution
    from maestro.domain.records import SweepMark


class MessageRead(Frozen):
    """A message as its surface reports it, read by SID: what the watcher compares a
    ``message.sent`` claim with."""

    sid: str
    to: str
    from_number: str | None = None
    body: str
    status: str
    error_code: str | None = None
    created_at: AwareDatetime | None = None
    provenance: Literal["twilio-read", "ddb-read"]
    surface: str = Field(description="What was read, e.g. 'Twilio Messages API: GET …'")


class MessageReader(Protocol):
    """Reads sent messages back from the messenger's own surface (Twilio's API; the messages
    table for the recording messenger, which sends nothing)."""

    provenance: Literal["twilio-read", "ddb-read"]
    surface: str

    def read(self, sid: str) -> MessageRead | None:
        """None when the surface has no such message; raises when it cannot be read now."""


class Ledger(Protocol):
    """Evidence and Shame rows: append-only, one per claim (create-once by row id), read back
    by package and by WO."""

    def record(self, row: LedgerRow) -> bool:
        """Append ``row`` unless its id is there already (a redelivery): False then."""

    def resolve(self, row: LedgerRow, resolution: Resolution) -> bool:
        """Mark the missing_event ``row`` resolved (it stays): False when it is not there or was
        resolved already."""

    def get(self, package_id: str, row_id: str) -> LedgerRow | None: ...

    def for_package(self, package_id: str, *, consistent: bool = True) -> list[LedgerRow]:
        """The package's rows; ``consistent=False`` (half the read units) may miss a row
        written in the last second."""

    def for_wo(self, wo_id: str) -> list[LedgerRow]: ...


class SweepWatermark(Protocol):
    """The sweeper's persisted progress (:class:`maestro.domain.records.SweepMark`)."""

    def read(self) -> SweepMark | None:
        """None before the first sweep."""

    def advance(self, mark: SweepMark) -> bool:
        """Store ``mark`` unless the stored one is at or past it already (a sweep that ran
        meanwhile): the mark never moves back. False then."""
