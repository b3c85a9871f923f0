"""A tenant's MMS on the embedded stack: texted to the loopback Twilio, which signs every field
(``MediaUrl{N}``, ``MediaContentType{N}`` included) and posts the webhook; the files reach the
WO's timeline as references on the entry the lane writes, and the watcher reads that entry
back as evidence."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from embedded import open_wo

from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.models import MediaRef
from maestro.domain.timeline import NoteEntry
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, VIC, seed

pytestmark = pytest.mark.integration

BASE = "https://api.twilio.com/2010-04-01/Accounts/AC0/Messages/MM7/Media/"
SHOWER = (BASE + "ME01", "image/heic")
CLIP = (BASE + "ME02", "video/mp4")


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def _notes(stack: LocalStack, wo_id: str) -> list[NoteEntry]:
    timeline = DynamoTimeline(stack.ddb, stack.tables["timeline"])
    return [e for e in timeline.for_wo(wo_id) if isinstance(e, NoteEntry)]


def _no_shame(stack: LocalStack) -> None:
    stack.settle()
    rows = stack.ledger_rows()
    assert rows
    assert [r.detail for r in rows if r.standing_shame] == []


def test_a_new_problem_reported_by_mms_keeps_its_files_on_the_wos_first_entry(
    stack: LocalStack,
) -> None:
    delivery = stack.twilio.text(
        MARIA.phone, "the shower door is broken, it came off the track", media=[SHOWER, CLIP]
    )
    assert [status for _, status in delivery.attempts] == [200]
    stack.advance(stack.idle + 1)
    store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    (opened,) = [wo for wo in store.listed(None, None)[0] if wo.wo_id != "WO-198"]
    (first,) = _notes(stack, opened.wo_id)
    assert first.media == (
        MediaRef(url=SHOWER[0], content_type=SHOWER[1]),
        MediaRef(url=CLIP[0], content_type=CLIP[1]),
    )
    assert first.photos == 1  # a video is a file, not a photo
    assert first.who == MARIA.party_id
    _no_shame(stack)  # the entry is claimed by a wo.updated the watcher read back


def test_a_photo_sent_about_an_open_wo_rides_on_the_relayed_note(stack: LocalStack) -> None:
    open_wo(stack, "WO-311", "shower door off its track")
    stack.twilio.text(
        MARIA.phone, "the shower door came off its track again this morning", media=[SHOWER]
    )
    stack.advance(stack.idle + 1)
    (note,) = _notes(stack, "WO-311")
    assert note.media == (MediaRef(url=SHOWER[0], content_type=SHOWER[1]),)
    assert note.photos == 1
    assert "(1 photo)" in note.what
    assert [m.body for m in stack.outbox(VIC.phone) if "WO-311" in m.body]  # relayed as before
    _no_shame(stack)
