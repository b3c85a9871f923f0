"""A work order's timeline: what happened to it, one typed entry per effect.

A relay adds a note (with the files the party sent, as references: ``media``), a WO opened
with files a first note holding them, a schedule a visit (proposed, confirmed or requested), a
rating its stars, a released cancel a status change. Each entry says who (the party, and their
part), when, what, and which package and decision it came from, and a read of the WO's timeline
returns it: "note added to WO-204" is then a claim an independent read can confirm, not a
version bump.

Entries are create-once under a deterministic id (the action's idempotency key and the kind),
so a re-run appends nothing twice. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from maestro.domain.common import AwareDatetime, Frozen
from maestro.domain.models import MAX_MEDIA, MediaRef, PartyRole, WorkOrderStatus

__all__ = [
    "TIMELINE_ENTRY",
    "EntryKind",
    "NoteEntry",
    "RatingEntry",
    "StatusEntry",
    "TimelineEntry",
    "VisitEntry",
    "entry_id_for",
    "photo_entries",
    "photos_on",
]

EntryKind = Literal["note", "visit", "rating", "status"]


def entry_id_for(idempotency_key: str, kind: EntryKind, suffix: str = "") -> str:
    """The deterministic id of the entry an action appends (``<key>#<kind>[#suffix]``)."""
    return f"{idempotency_key}#{kind}" + (f"#{suffix}" if suffix else "")


class _Entry(Frozen):
    wo_id: str = Field(min_length=1)
    entry_id: str = Field(min_length=1)
    at: AwareDatetime
    who: str | None = Field(
        default=None, description="The party it came from (None: maestro on its own)"
    )
    who_role: PartyRole | None = None
    package_id: str
    decision_id: str | None = Field(default=None, description="The decision that made it")
    what: str = Field(max_length=500, description="One line, as a person reads it")
    media: tuple[MediaRef, ...] = Field(
        default=(),
        max_length=2 * MAX_MEDIA,
        description="The files the party sent with it (an MMS's photos): references (URL and "
        "content type), never the bytes; what gather counts as photos",
    )

    @property
    def photos(self) -> int:
        return sum(ref.is_photo for ref in self.media)


class NoteEntry(_Entry):
    kind: Literal["note"] = "note"
    note: str = Field(min_length=1, max_length=1000)


class VisitEntry(_Entry):
    kind: Literal["visit"] = "visit"
    mode: Literal["propose", "confirm", "request"]
    availability: str = Field(default="", max_length=500)
    window_start: AwareDatetime | None = None
    window_end: AwareDatetime | None = None
    status: WorkOrderStatus = Field(description="The WO's status after the visit was recorded")


class RatingEntry(_Entry):
    kind: Literal["rating"] = "rating"
    stars: int = Field(ge=1, le=5)


class StatusEntry(_Entry):
    kind: Literal["status"] = "status"
    from_status: WorkOrderStatus | None = None
    to_status: WorkOrderStatus
    operation: str = ""


TimelineEntry = Annotated[
    NoteEntry | VisitEntry | RatingEntry | StatusEntry, Field(discriminator="kind")
]
TIMELINE_ENTRY: TypeAdapter[TimelineEntry] = TypeAdapter(TimelineEntry)
"""Reads any stored entry back into its own type."""


def photos_on(entries: Sequence[TimelineEntry]) -> int:
    """How many photos a WO's timeline holds: its entries' ``image/*`` files, each URL once (one
    MMS kept on two entries, a WO's first note and a relay of the same package, is one photo)."""
    return len({ref.url for entry in entries for ref in entry.media if ref.is_photo})


def photo_entries(entries: Sequence[TimelineEntry]) -> tuple[str, ...]:
    """The ids of the entries holding a photo, in timeline order (``Gathered.photos``)."""
    return tuple(entry.entry_id for entry in entries if entry.photos)
