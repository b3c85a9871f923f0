"""The honesty ledger: Evidence and Shame rows (the Wall of Shame of seed ADR-0064).

A claim is true only when an independent read of the surface it names confirms it. The watcher
reads that surface itself and writes one row per claim:

- **Evidence**: the read confirms the claim. Its provenance says what was read:
  ``twilio-read`` (Twilio's Messages API), ``wo-read`` (the WO store and the WO's timeline),
  ``ddb-read`` (a maestro table: the decision log, the pending store, or the messages table of
  the recording messenger, which sends nothing and is never presented as Twilio).
- **Shame**: ``unverified_claim`` (the surface has nothing the claim names), ``mismatch`` (it
  has it, with other values), ``missing_event`` (an effect was written and no event claimed it:
  found by the sweeper).

Rows are append-only and keyed deterministically (a claim's row by its event id), so a
redelivered event writes nothing twice. One thing is added to a row later, never changed: a
``missing_event`` row whose event came after all (it waited in the watcher's DLQ, say) is marked
**resolved** by the watcher's row for that event, with what that read found; it stays in the
ledger as history and no longer stands as Shame (:attr:`LedgerRow.standing_shame`). The claim
is then judged by its own row, as if the event had come in time: Evidence, or Shame of its own
(a mismatch) that stands. Pure: no I/O.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from maestro.domain.common import AwareDatetime, Frozen
from maestro.domain.events import ClaimValue, EventType

__all__ = [
    "LedgerRow",
    "Provenance",
    "Resolution",
    "ShameKind",
    "Verdict",
    "missing_event_row_id",
    "missing_row_id_of",
]

Provenance = Literal["twilio-read", "wo-read", "ddb-read"]
ShameKind = Literal["unverified_claim", "mismatch", "missing_event"]
Verdict = Literal["evidence", "shame"]


def missing_event_row_id(decision_id: str, event: EventType, subject_id: str) -> str:
    """The sweeper's row for an effect no event claimed: one per (decision, event, subject)."""
    return f"missing#{decision_id}#{event}#{subject_id}"


class Resolution(Frozen):
    """What resolved a ``missing_event`` row: the watcher's row for its event, which came late."""

    row_id: str = Field(description="The watcher's row for the event (its event id)")
    verdict: Verdict = Field(description="What that read found: evidence, or shame of its own")
    provenance: Provenance | None = None
    detail: str = Field(max_length=500, description="What the late read found, in words")
    resolved_at: AwareDatetime


class LedgerRow(Frozen):
    row_id: str = Field(description="The claim's event id, or the sweeper's missing-event id")
    verdict: Verdict
    kind: ShameKind | None = Field(default=None, description="Shame only: which kind")
    package_id: str
    decision_id: str | None = None
    wo_id: str | None = None
    event_type: EventType = Field(description="The event claimed (or expected, if missing)")
    event_id: str | None = Field(default=None, description="None for a missing event")
    subject_id: str = Field(description="What the claim names on its surface")
    provenance: Provenance | None = Field(
        default=None, description="What was read; None only when nothing could be read"
    )
    surface: str = Field(default="", max_length=300, description="The read, in words")
    claimed: dict[str, ClaimValue] = Field(default_factory=dict)
    read: dict[str, ClaimValue] = Field(
        default_factory=dict, description="The values the read returned (never the claim's)"
    )
    detail: str = Field(max_length=500, description="One line: what matched, or what did not")
    occurred_at: AwareDatetime | None = Field(default=None, description="When it was claimed")
    checked_at: AwareDatetime
    resolution: Resolution | None = Field(
        default=None,
        description="A missing_event row only: the late Evidence that resolved it (the row stays)",
    )

    @model_validator(mode="after")
    def _verdict_and_kind(self) -> LedgerRow:
        if (self.verdict == "shame") != (self.kind is not None):
            raise ValueError("a shame row has a kind, an evidence row has none")
        if self.verdict == "evidence" and self.provenance is None:
            raise ValueError("evidence says what was read (its provenance)")
        if self.resolution is not None and self.kind != "missing_event":
            raise ValueError("only a missing_event row is resolved (by its event, read late)")
        return self

    @property
    def standing_shame(self) -> bool:
        """Shame that stands: every Shame row but a missing_event row its late event resolved.
        What counts or shows Shame counts these."""
        return self.verdict == "shame" and self.resolution is None

    @property
    def mark(self) -> str:
        """The verdict in a line: ``evidence``, ``SHAME <kind>``, or for a resolved row its kind
        and what resolved it."""
        if self.verdict == "evidence":
            return "evidence"
        if self.resolution is not None:
            return f"{self.kind} resolved by {self.resolution.row_id} ({self.resolution.verdict})"
        return f"SHAME {self.kind}"

    def resolved_by(self, watched: LedgerRow) -> Resolution | None:
        """The resolution the watcher's row ``watched`` gives this row: when this is a standing
        missing_event row for the effect that ``watched``'s event claims; else None."""
        if not self.standing_shame or self.kind != "missing_event" or watched.event_id is None:
            return None
        if self.row_id != missing_row_id_of(watched) or self.package_id != watched.package_id:
            return None
        found = "confirmed" if watched.verdict == "evidence" else f"Shame ({watched.kind})"
        return Resolution(
            row_id=watched.row_id,
            verdict=watched.verdict,
            provenance=watched.provenance,
            detail=f"its event came late; the read: {found}: {watched.detail}"[:500],
            resolved_at=watched.checked_at,
        )


def missing_row_id_of(row: LedgerRow) -> str:
    """The id of the sweeper's missing_event row for the effect ``row``'s event claims (whether
    or not the sweeper wrote one)."""
    return missing_event_row_id(row.decision_id or row.package_id, row.event_type, row.subject_id)
