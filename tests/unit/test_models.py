from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from builders import T0, package, wo_context
from pydantic import ValidationError

from maestro.domain.models import (
    ContextKind,
    InvalidTransitionError,
    MediaRef,
    Message,
    OpenContext,
    Package,
    Party,
    PartyRole,
    VisitWindow,
    WorkOrder,
    WorkOrderStatus,
    context_for_work_order,
    media_of,
    package_id_for,
)
from maestro.domain.timeline import NoteEntry, photo_entries, photos_on


def _wo(**changes: object) -> WorkOrder:
    data: dict[str, object] = {
        "wo_id": "WO-204",
        "tenant_id": "tenant-maria",
        "summary": "leak under the kitchen sink",
        "unit": "3B",
        "created_at": T0,
        "updated_at": T0,
    }
    data.update(changes)
    return WorkOrder.model_validate(data)


@pytest.mark.parametrize("phone", ["4155550100", "+0155550100", "+1 415 555 0100", "+1", ""])
def test_party_phone_must_be_e164(phone: str) -> None:
    with pytest.raises(ValidationError):
        Party(party_id="p", role=PartyRole.TENANT, phone=phone)


def test_party_accepts_e164_and_is_immutable() -> None:
    party = Party(party_id="p", role=PartyRole.VENDOR, phone="+442071838750")
    with pytest.raises(ValidationError):
        party.phone = "+14155550100"


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValidationError, match="timezone-aware"):
        Message(
            message_id="SM1",
            conversation_id="c",
            from_phone="+14155550100",
            received_at=datetime(2026, 1, 1, 12, 0),
            seq=0,
        )


def test_package_messages_must_be_in_seq_order() -> None:
    good = package("one", "two")
    reordered = good.model_dump()
    reordered["messages"] = list(reversed(reordered["messages"]))
    with pytest.raises(ValidationError, match="increasing seq"):
        Package.model_validate(reordered)


def test_package_messages_must_belong_to_its_conversation() -> None:
    data = package("one").model_dump()
    data["messages"][0]["conversation_id"] = "someone-else"
    with pytest.raises(ValidationError, match="belong"):
        Package.model_validate(data)


def test_package_id_is_deterministic_and_distinct_per_flush() -> None:
    assert package_id_for("conv-1", 3) == package_id_for("conv-1", 3)
    assert package_id_for("conv-1", 3) != package_id_for("conv-1", 4)
    assert package_id_for("conv-1", 3) != package_id_for("conv-2", 3)


def test_work_order_lifecycle_happy_path_bumps_version() -> None:
    window = VisitWindow(start=T0 + timedelta(days=1), end=T0 + timedelta(days=1, hours=2))
    wo = _wo().schedule(window, T0)
    wo = wo.transition(WorkOrderStatus.IN_PROGRESS, T0).transition(WorkOrderStatus.COMPLETED, T0)
    assert wo.status is WorkOrderStatus.COMPLETED
    assert wo.version == 4


@pytest.mark.parametrize(
    ("start", "to"),
    [
        (WorkOrderStatus.OPEN, WorkOrderStatus.COMPLETED),
        (WorkOrderStatus.COMPLETED, WorkOrderStatus.OPEN),
        (WorkOrderStatus.CANCELLED, WorkOrderStatus.SCHEDULED),
        (WorkOrderStatus.COMPLETED, WorkOrderStatus.CANCELLED),
    ],
)
def test_work_order_refuses_transitions_outside_the_lifecycle(
    start: WorkOrderStatus, to: WorkOrderStatus
) -> None:
    with pytest.raises(InvalidTransitionError):
        _wo(status=start).transition(to, T0)


def test_rating_only_while_requested() -> None:
    done = _wo(status=WorkOrderStatus.COMPLETED)
    with pytest.raises(InvalidTransitionError, match="no rating request"):
        done.record_rating(5, T0)
    rated = done.request_rating(T0).record_rating(4, T0)
    assert rated.rating == 4
    assert not rated.rating_requested
    with pytest.raises(InvalidTransitionError):
        rated.record_rating(5, T0)


def test_rating_request_needs_a_completed_work_order() -> None:
    with pytest.raises(InvalidTransitionError):
        _wo().request_rating(T0)
    with pytest.raises(ValidationError):
        _wo(rating_requested=True)


def test_context_staleness_uses_last_activity() -> None:
    fresh = wo_context("WO-1", age=timedelta(hours=71))
    stale = wo_context("WO-2", age=timedelta(hours=73))
    assert not fresh.is_stale(T0)
    assert stale.is_stale(T0)
    assert stale.is_stale(T0, ttl=timedelta(hours=72))
    assert not stale.is_stale(T0, ttl=timedelta(days=7))


def test_context_line_names_id_and_what_it_waits_for() -> None:
    ctx = wo_context("WO-204", awaiting="availability")
    assert ctx.line().startswith("WO-204 (work_order): leak under the kitchen sink")
    assert ctx.line().endswith("awaiting availability")


def test_context_for_a_work_order_carries_its_rating_request() -> None:
    done = _wo(status=WorkOrderStatus.COMPLETED).request_rating(T0)
    ctx = context_for_work_order(done)
    assert ctx.rating_requested
    assert ctx.awaiting == "rating"
    assert ctx.kind is ContextKind.WORK_ORDER


def test_context_description_is_one_bounded_line() -> None:
    with pytest.raises(ValidationError):
        OpenContext(
            context_id="x", kind=ContextKind.WORK_ORDER, description="y" * 201, opened_at=T0
        )


# -- MMS media: references on messages, packages and timeline entries -----------------------------

SNAP = "https://api.twilio.com/2010-04-01/Accounts/AC0/Messages/MM1/Media/ME1"


@pytest.mark.parametrize(
    ("url", "content_type"),
    [
        ("javascript:alert(1)", "image/png"),
        ("https://x/" + "a" * 2_100, "image/png"),
        ("https://x/a b", "image/png"),
        (SNAP, "image"),
        (SNAP, "image/png; name=x.png"),
        (SNAP, "IMAGE/PNG"),  # the webhook lower-cases what Twilio sends: stored in lower case
    ],
)
def test_a_media_reference_out_of_shape_is_refused(url: str, content_type: str) -> None:
    with pytest.raises(ValidationError):
        MediaRef(url=url, content_type=content_type)


def test_a_message_stored_before_content_types_reads_back_with_its_urls() -> None:
    (stored,) = package("see the photo").messages
    legacy = {**stored.model_dump(mode="json", exclude={"media"}), "media_urls": [SNAP]}
    message = Message.model_validate(legacy)
    assert message.media == (MediaRef(url=SNAP),)
    assert message.media_urls == (SNAP,)
    assert not message.media[0].is_photo  # no content type: not known to be a photo


def test_a_packages_media_are_its_messages_each_url_once_in_order() -> None:
    first, second = package("here", "and again").messages
    photo = MediaRef(url=SNAP, content_type="image/jpeg")
    other = MediaRef(url=SNAP.replace("ME1", "ME2"), content_type="application/pdf")
    pkg = package("here", "and again").model_copy(
        update={
            "messages": (
                first.model_copy(update={"media": (photo,)}),
                second.model_copy(update={"media": (other, photo)}),
            )
        }
    )
    assert pkg.media == (photo, other)
    assert media_of(pkg.messages, limit=1) == (photo,)


def test_a_timelines_photos_count_each_image_once_across_entries() -> None:
    photo = MediaRef(url=SNAP, content_type="image/heic")
    clip = MediaRef(url=SNAP.replace("ME1", "ME2"), content_type="video/mp4")

    def note(entry_id: str, *media: MediaRef) -> NoteEntry:
        return NoteEntry(
            wo_id="WO-204",
            entry_id=entry_id,
            at=T0,
            package_id="pkg-1",
            what="a note",
            note="the cabinet base is soft",
            media=media,
        )

    entries = [note("a", photo, clip), note("b"), note("c", photo)]
    assert [e.photos for e in entries] == [1, 0, 1]
    assert photos_on(entries) == 1  # the same MMS kept on two entries is one photo
    assert photo_entries(entries) == ("a", "c")
    assert photos_on([note("d", clip)]) == 0
