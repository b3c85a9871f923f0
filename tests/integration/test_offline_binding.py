"""Bind less, ask more: the offline binder on the embedded stack (issue #20, item 6).

Signed SMS through the real webhook, flushed by the idle window through the real ASL; the notes
are read back from the timeline and the texts from the loopback Twilio. Maria has two open work
orders. A detail that fits both by a shared symptom is asked about (nothing is written to
either); a detail that names one's thing joins that one; a text naming a thing of its own opens
a work order of its own. Naive behaviour it was written to fail on: the offline binder put a
detail sharing only a symptom word with one open work order on that work order.
"""

from __future__ import annotations

import pytest
from embedded import flush, open_wo, sms, to_phone, work_orders

from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.domain.timeline import NoteEntry
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, seed

pytestmark = pytest.mark.integration


def _notes(stack: LocalStack, wo_id: str) -> list[str]:
    timeline = DynamoTimeline(stack.ddb, stack.tables["timeline"])
    return [e.note for e in timeline.for_wo(wo_id) if isinstance(e, NoteEntry)]


def test_a_shared_symptom_is_asked_about_a_named_thing_binds_a_new_thing_opens_its_own() -> None:
    with LocalStack() as stack:
        seed(stack)  # Maria, with WO-198 finished (its rating request out: no place for notes)
        open_wo(stack, "WO-611", "the shower head is leaking at the joint")
        open_wo(stack, "WO-612", "water leaking from under the dishwasher")
        before = len(to_phone(stack, MARIA.phone))

        # "Leaking" fits both; nothing names either one.
        sms(stack, "its leaking again, worse than yesterday")
        flush(stack)
        asked = to_phone(stack, MARIA.phone)[before:]
        assert len(asked) == 1, asked
        assert "WO-611" in asked[0], asked[0]
        assert "WO-612" in asked[0], asked[0]
        assert _notes(stack, "WO-611") == []
        assert _notes(stack, "WO-612") == []

        # The answer names the dishwasher: the withheld detail goes to that one only.
        sms(stack, "the dishwasher one")
        flush(stack)
        assert _notes(stack, "WO-611") == []
        assert _notes(stack, "WO-612") == ["its leaking again, worse than yesterday"]

        # Unasked, a detail naming the dishwasher binds to it.
        sms(stack, "the dishwasher water is pooling across the floor now")
        flush(stack)
        assert _notes(stack, "WO-611") == []
        assert len(_notes(stack, "WO-612")) == 2

        # A thing of its own with a symptom word the others share: a work order of its own.
        sms(stack, "different thing - the hallway smoke detector cover is broken and hanging")
        flush(stack)
        opened = [wo for wo in work_orders(stack) if wo.wo_id not in {"WO-198", "WO-611", "WO-612"}]
        assert [wo.tenant_id for wo in opened] == [MARIA.party_id]
        assert "smoke detector" in opened[0].summary
        assert _notes(stack, "WO-611") == []
        assert len(_notes(stack, "WO-612")) == 2
