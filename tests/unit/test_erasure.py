"""The erase rules (maestro.domain.erasure): what is the person's, and what it becomes."""

from __future__ import annotations

import json

from maestro.domain.erasure import ERASED, ErasureScope

PHONE = "+14155550123"
LONG = "the boiler in the basement has been knocking since the storm on friday"
SCOPE = ErasureScope(
    phones=(PHONE,),
    party_ids=("tenant-ines",),
    conversation_ids=("conv-abc",),
    package_ids=("pkg-1111-1",),
    bodies=(LONG, "yes"),
)


def test_a_number_is_erased_anywhere_with_or_without_its_plus() -> None:
    text = f"page: from Ines ({PHONE}), call back on {PHONE[1:]} tonight"
    redacted = SCOPE.redact(text, linked=False)
    assert redacted.changed
    assert redacted.value == f"page: from Ines ({ERASED}), call back on {ERASED} tonight"


def test_a_quote_cut_short_is_erased_and_what_others_wrote_stays() -> None:
    page = f'Ines said: "{LONG[:40]}…" and the PM replied: on my way'
    redacted = SCOPE.redact(page, linked=False).value
    assert redacted == f'Ines said: "{ERASED}…" and the PM replied: on my way'
    # Quoted in other capitals, still hers.
    assert SCOPE.redact(LONG.upper(), linked=False).value == ERASED


def test_a_short_body_is_hers_only_where_the_item_is() -> None:
    other = "yes, I fixed it yesterday"
    assert not SCOPE.redact(other, linked=False).changed  # another person's words
    assert SCOPE.redact("yes", linked=True).value == ERASED


def test_in_an_item_that_names_her_every_free_text_goes_and_the_structure_stays() -> None:
    doc = {
        "decision_id": "pkg-1111-1#dispose#0",
        "lane": "create_wo",
        "recorded_at": "2026-06-17T14:05:00Z",
        "confidence": 0.8,
        "command": {"why": "the tenant reports a knocking boiler", "category": "plumbing"},
    }
    stored = json.dumps(doc)
    assert SCOPE.links(stored)
    redacted = SCOPE.redact(stored, linked=True)
    assert redacted.changed
    assert json.loads(redacted.value) == {
        **doc,
        "command": {"why": ERASED, "category": "plumbing"},
    }


def test_what_names_her_links_and_what_does_not_leaves_an_item_alone() -> None:
    assert SCOPE.links({"party_key": "tenant-ines"})
    assert SCOPE.links({"conversation_id": "conv-abc"})
    assert SCOPE.links(["x", {"idempotency_key": "pkg-1111-1#0#tenant"}])
    assert not SCOPE.links({"party_key": "tenant-ines-2", "note": "tenant-ines is nice"})
    unrelated = {"lane": "create_wo", "why": "a leak under the sink"}
    assert not SCOPE.redact(unrelated, linked=False).changed


def test_keys_holding_her_number_mark_the_item_for_deletion() -> None:
    assert SCOPE.key_names_them(["throttle#unknown#" + PHONE, "window"])
    assert SCOPE.key_names_them([PHONE[1:]])
    assert not SCOPE.key_names_them(["conv-abc", "meta"])


def test_an_erased_value_is_left_as_it_is() -> None:
    assert not SCOPE.redact(ERASED, linked=True).changed
    assert not SCOPE.redact({"body": ERASED, "n": 3}, linked=True).changed
