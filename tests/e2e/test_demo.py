"""`maestro demo` end to end: the leak-204 story on the embedded stack."""

from __future__ import annotations

import io
import json

import pytest

from maestro_dev.cli import main

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def demo() -> dict[str, object]:
    out = io.StringIO()
    assert main(["demo", "--json"], out=out) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_demo_names_its_brain_and_reports_the_contract_fields(demo: dict[str, object]) -> None:
    assert demo["brain"] == "offline brain (deterministic rules, no model)"
    assert {
        "packages",
        "actions",
        "transitions_per_package",
        "evidence",
        "shame",
        "wall_seconds",
    } <= set(demo)
    assert demo["packages"] == 6


def test_demo_tells_the_leak_204_story(demo: dict[str, object]) -> None:
    lanes = [(a["lane"], a["target_wo_id"]) for a in demo["actions"]]  # type: ignore[attr-defined]
    created = lanes[0]
    assert created == ("create_wo", None)
    # The access reply answers the new WO's gather question; it is not taken for a 2-star
    # rating of WO-198.
    assert lanes[1][0] == "schedule_visit"
    assert lanes[1][1] != "WO-198"
    wo_id = lanes[1][1]
    # Vic's "1" answers his open offer of that WO, deterministically: no brain, no new problem.
    assert lanes[2] == ("answer_wait", wo_id)
    assert lanes[3] == ("record_rating", "WO-198")
    assert lanes[4] == ("escalate", None)
    assert lanes[5] == ("continue_with_assistant", None)
    assert demo["routes"] == dict(  # type: ignore[comparison-overlap]
        zip(
            demo["transitions_per_package"],
            ["reasoning"] * 4 + ["escalate", "handback"],  # type: ignore[call-overload]
            strict=True,
        )
    )


def test_the_leak_goes_to_vic_who_takes_it_and_maria_is_told(demo: dict[str, object]) -> None:
    (wo,) = demo["work_orders"]  # type: ignore[misc]
    assert (wo["status"], wo["step"], wo["offers"]) == (
        "SUCCEEDED",
        "assigned",
        ["vendor-vic: accepted"],
    )
    assert "Dispatch: offer to vendor 1 of 3" in wo["states"]
    assert wo["states"][-1] == "Assigned: a vendor accepted"
    bodies = [t["body"] for t in demo["texts"]]  # type: ignore[attr-defined]
    offer = next(b for b in bodies if "Reply 1 to accept" in b)
    assert "fine to come in" not in offer  # access details only once he has accepted
    access = next(b for b in bodies if b.startswith(f"{wo['wo_id']} is yours"))
    assert "fine to come in, 2 onward" in access  # her own words, not only the times read
    assert any("Vic" in b and "accepted" in b and wo["wo_id"] in b for b in bodies)


def test_every_package_reaches_the_bus(demo: dict[str, object]) -> None:
    events = demo["events"]
    assert events["decision.recorded"] == 6  # type: ignore[index]
    assert events["wo.created"] == 1  # type: ignore[index]
    assert events["escalation.paged"] == 1  # type: ignore[index]


def test_every_claim_of_the_demo_has_evidence_and_there_is_no_shame(
    demo: dict[str, object],
) -> None:
    events: dict[str, int] = demo["events"]  # type: ignore[assignment]
    # One ledger row per event the watcher read back: every one of them evidence.
    assert demo["evidence"] == sum(events.values()) > 0
    assert demo["shame"] == 0, demo["shame_rows"]


def test_the_demo_shows_each_text_as_twilio_reports_it(demo: dict[str, object]) -> None:
    texts: list[dict[str, str]] = demo["texts"]  # type: ignore[assignment]
    events: dict[str, int] = demo["events"]  # type: ignore[assignment]
    assert len(texts) == events["message.sent"]
    for text in texts:
        # A Twilio SID, read from Twilio's Messages API (not the recording messenger's table),
        # after the loopback moved it on to delivered.
        assert text["sid"].startswith("SM"), text
        assert not text["sid"].startswith("SMrec"), text
        assert (text["read"], text["status"]) == ("twilio-read", "delivered"), text
