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
redelivered event writes nothing twice. Pure: no I/O.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from maestro.domain.common import AwareDatetime, Frozen
from maestro.domain.events import ClaimValue, EventType

__all__ = ["LedgerRow", "Provenance", "ShameKind", "Verdict", "missing_event_row_id"]

Provenance = Literal["twilio-read", "wo-read", "ddb-read"]
ShameKind = Literal["unverified_claim", "mismatch", "missing_event"]
Verdict = Literal["evidence", "shame"]


def missing_event_row_id(decision_id: str, event: EventType, subject_id: str) -> str:
    """The sweeper's row for an effect no event claimed: one per (decision, event, subject)."""
    return f"missing#{decision_id}#{event}#{subject_id}"


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

    @model_validator(mode="after")
    def _verdict_and_kind(self) -> LedgerRow:
        if (self.verdict == "shame") != (self.kind is not None):
            raise ValueError("a shame row has a kind, an evidence row has none")
        if self.verdict == "evidence" and self.provenance is None:
            raise ValueError("evidence says what was read (its provenance)")
        return self
