"""Every domain event has one schema for its claim; an event whose claim does not fit is
refused where it is built (always-emit publishes only well-formed claims)."""

from __future__ import annotations

from typing import get_args

import pytest
from builders import T0
from pydantic import ValidationError

from maestro.domain.events import CLAIMS, DomainEvent, EventType, body_digest


def test_every_event_type_has_a_claim_schema() -> None:
    assert set(CLAIMS) == set(get_args(EventType))


def _event(type_: EventType, claim: dict[str, object]) -> DomainEvent:
    return DomainEvent(
        event_id="pkg-1#0#" + type_,
        type=type_,
        package_id="pkg-1",
        decision_id="pkg-1#reasoning#0",
        subject_id="WO-1",
        claim=claim,  # type: ignore[arg-type]
        occurred_at=T0,
    )


def test_a_claim_that_fits_its_schema_is_carried_with_its_ids() -> None:
    claim = {"entry_id": "pkg-1#0#rating", "stars": 4, "version": 3}
    event = _event("rating.recorded", claim)
    assert event.decision_id == "pkg-1#reasoning#0"
    assert event.typed_claim().model_dump() == claim


_QUOTING = {"to": "+14155550100", "body": "the words"}


@pytest.mark.parametrize(
    ("type_", "claim"),
    [
        ("rating.recorded", {"entry_id": "e", "stars": 9, "version": 1}),  # out of range
        ("rating.recorded", {"stars": 4, "version": 1}),  # which entry it wrote is missing
        ("wo.updated", {"entry_id": "e", "entry": "note", "version": 2, "status": "open", "x": 1}),
        ("message.sent", {"to_sha256": "+14155550100", "body_sha256": "0" * 64, "via": "x"}),
        ("decision.recorded", {}),
        # An event quotes nobody: the archive cannot be edited, so an erase could not reach it.
        ("message.sent", {**_QUOTING, "body_sha256": "0" * 64, "via": "twilio"}),
        ("wo.created", {"summary": "the words", "status": "open", "tenant_id": "t", "version": 1}),
        (
            "wo.updated",
            {"entry_id": "e", "entry": "note", "version": 2, "status": "o", "note": "x"},
        ),
        ("escalation.paged", {"to": "+14155550100", "reason": "emergency", "severity": "high"}),
    ],
)
def test_a_claim_that_does_not_fit_is_refused(type_: EventType, claim: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        _event(type_, claim)


def test_a_message_claim_names_its_whole_text_by_hash() -> None:
    body = "x" * 1000
    event = _event(
        "message.sent",
        {
            "to_sha256": body_digest("+14155550100"),
            "body_sha256": body_digest(body),
            "via": "twilio",
        },
    )
    assert event.claim["body_sha256"] == body_digest(body)
