"""Dispose: each invariant test names the naive rule it is written to fail on."""

from __future__ import annotations

from datetime import timedelta

from builders import MARIA, act, consensus, package, wo_context

from maestro.domain.actions import Lane
from maestro.domain.dispose import dispose
from maestro.domain.models import Party, PartyRole
from maestro.domain.records import Disposition, PreCheckResult, Route

LEAK_204 = wo_context("WO-204", "leak under the kitchen sink, unit 3B", awaiting="availability")
TAP_198 = wo_context("WO-198", "dripping bathroom tap, fixed", rating_requested=True)
LEAK_211 = wo_context("WO-211", "leak from the bathroom ceiling, unit 3B", age=timedelta(minutes=5))
ACCESS_REPLY = package("fine to come in, 2 onward")


def _lanes_and_targets(disposal: object) -> list[tuple[str, str | None]]:
    return [(q.action.lane.value, q.action.target_wo_id) for q in disposal.actions]


def test_leak_204_access_reply_schedules_the_visit() -> None:
    verdicts = consensus(*[[act("schedule_visit", "WO-204", availability="2 onward")]] * 5)
    disposal = dispose(ACCESS_REPLY, MARIA, [LEAK_204, TAP_198], verdicts)
    assert _lanes_and_targets(disposal) == [("schedule_visit", "WO-204")]
    (decision,) = disposal.decisions
    assert decision.context_relation == "resolves"
    assert decision.bound_context_id == "WO-204"
    assert decision.open_context_count == 2


def test_i7_a_number_in_an_answer_is_not_a_rating() -> None:
    """I7, naive rule "take any digit as a rating": "fine to come in, 2 onward" would record a
    2-star rating. Even when every sample reads it so, WO-204 has no rating request out, so no
    rating is recorded."""
    verdicts = consensus(*[[act("record_rating", "WO-204", stars=2)]] * 5)
    disposal = dispose(ACCESS_REPLY, MARIA, [LEAK_204, TAP_198], verdicts)
    assert Lane.RECORD_RATING not in disposal.lanes
    rejected = [d for d in disposal.decisions if d.disposition is Disposition.REJECTED]
    assert [d.lane for d in rejected] == [Lane.RECORD_RATING]
    assert "no rating request" in rejected[0].reason


def test_i7_a_requested_rating_is_recorded() -> None:
    verdicts = consensus(*[[act("record_rating", "WO-198", stars=5)]] * 5)
    disposal = dispose(package("5 stars, great job"), MARIA, [LEAK_204, TAP_198], verdicts)
    assert _lanes_and_targets(disposal) == [("record_rating", "WO-198")]


def test_i3_a_split_mutates_nothing_and_asks_once() -> None:
    """I3, naive rule "act on the majority": 3 samples rate WO-198 and 2 schedule WO-204, each
    at 0.95; the majority rule records a rating. Dispose mutates nothing and asks one question
    naming both."""
    rate = [act("record_rating", "WO-198", stars=2, confidence=0.95)]
    visit = [act("schedule_visit", "WO-204", confidence=0.95)]
    disposal = dispose(
        ACCESS_REPLY, MARIA, [LEAK_204, TAP_198], consensus(rate, rate, rate, visit, visit)
    )
    assert disposal.lanes == (Lane.CLARIFY,)
    clarify = disposal.actions[0].action
    assert clarify.params.candidate_ids == ("WO-198", "WO-204")
    assert "WO-198" in clarify.params.question
    assert "WO-204" in clarify.params.question
    assert all(d.abstained for d in disposal.decisions)


def test_a_split_between_readings_the_sender_may_never_run_asks_nothing() -> None:
    """Naive rule "a split always asks, and the answer runs what was deferred": a vendor's
    words split between rating one job and rating the other (a vendor never rates) would be
    asked about, and "the second one" would then record the vendor's rating. Both readings are
    refused as the decided path refuses them; nothing is deferred, the vendor is told."""
    grout = wo_context("WO-512", "cracked grout behind the tub, unit 7", rating_requested=True)
    vent = wo_context("WO-513", "rattling vent cover, unit 7", rating_requested=True)
    vendor = Party(party_id="vendor-ola", role=PartyRole.VENDOR, phone="+14155550187")
    first = [act("record_rating", "WO-512", stars=5, confidence=0.9)]
    second = [act("record_rating", "WO-513", stars=5, confidence=0.9)]
    words = package("both sorted, five out of five from me", phone=vendor.phone)
    disposal = dispose(words, vendor, [grout, vent], consensus(first, second, first, second))
    assert Lane.CLARIFY not in disposal.lanes
    assert Lane.RECORD_RATING not in disposal.lanes
    rejected = [d for d in disposal.decisions if d.disposition is Disposition.REJECTED]
    assert [d.lane for d in rejected] == [Lane.RECORD_RATING, Lane.RECORD_RATING]
    assert disposal.lanes == (Lane.CONTINUE_WITH_ASSISTANT,)
    assert disposal.actions[0].action.params.reply_hint  # told what was not done, and why


def test_i4_two_open_leaks_are_disambiguated_never_the_most_recent() -> None:
    """I4, naive rule "bind to the most recent WO": "the leak is back" would bind WO-211 (touched
    5 minutes ago). With the samples split, dispose asks which one."""
    a = [act("relay_to_open_wo", "WO-204", note="the leak is back")]
    b = [act("relay_to_open_wo", "WO-211", note="the leak is back")]
    disposal = dispose(
        package("the leak is back"), MARIA, [LEAK_204, LEAK_211], consensus(a, a, a, b, b)
    )
    assert disposal.lanes == (Lane.CLARIFY,)
    assert disposal.actions[0].action.params.candidate_ids == ("WO-204", "WO-211")
    assert not any(d.bound_context_id for d in disposal.decisions)


def test_i4_a_target_outside_the_senders_contexts_is_never_used() -> None:
    """Ownership, naive rule "trust the model's WO id": a unanimous relay to another tenant's
    WO-999 is rejected and the sender is asked among their own open contexts."""
    verdicts = consensus(*[[act("relay_to_open_wo", "WO-999")]] * 5)
    disposal = dispose(package("the leak is back"), MARIA, [LEAK_204, LEAK_211], verdicts)
    assert disposal.lanes == (Lane.CLARIFY,)
    clarify = disposal.actions[0].action
    assert clarify.params.candidate_ids == ("WO-204", "WO-211")
    assert clarify.params.reason == "not_owned"


def test_i2_a_context_past_its_ttl_is_not_resumed() -> None:
    """I2, naive rule "resume whatever is open": a stray "yes tuesday works" four days after the
    access question would schedule WO-204. Past the 72 h TTL, dispose asks first."""
    stale = wo_context("WO-204", awaiting="availability", age=timedelta(days=4))
    verdicts = consensus(*[[act("schedule_visit", "WO-204", availability="tuesday")]] * 5)
    disposal = dispose(package("yes tuesday works"), MARIA, [stale], verdicts)
    assert disposal.lanes == (Lane.CLARIFY,)
    clarify = disposal.actions[0].action
    assert clarify.params.reason == "stale_context"
    assert clarify.params.candidate_ids == ("WO-204",)


def test_i2_the_same_reply_inside_the_ttl_is_resumed() -> None:
    fresh = wo_context("WO-204", awaiting="availability", age=timedelta(hours=70))
    verdicts = consensus(*[[act("schedule_visit", "WO-204", availability="tuesday")]] * 5)
    disposal = dispose(package("yes tuesday works"), MARIA, [fresh], verdicts)
    assert disposal.lanes == (Lane.SCHEDULE_VISIT,)


def test_never_guess_a_person_unknown_sender_binds_nothing() -> None:
    """Never guess a person, naive rule "bind an unknown number to the tenant the text names":
    "this is Maria in 3B, the leak is back" from an unknown number would relay to Maria's WO.
    Dispose binds nothing and hands the identity question to the PM."""
    stranger = package("this is Maria in 3B, the leak is back", phone="+14155559999")
    verdicts = consensus(*[[act("relay_to_open_wo", "WO-204")]] * 5)
    disposal = dispose(stranger, None, [LEAK_204], verdicts)
    assert _lanes_and_targets(disposal) == [("escalate", None)]
    handoff = disposal.actions[0].action
    assert handoff.params.reason == "identity"
    assert all(d.bound_context_id is None for d in disposal.decisions)
    assert [d.disposition for d in disposal.decisions][:1] == [Disposition.REJECTED]


def test_an_unknown_sender_reporting_an_emergency_still_pages() -> None:
    stranger = package("smell gas in the hallway", phone="+14155559999")
    verdicts = consensus(*[[act("escalate", hazard="gas")]] * 5)
    disposal = dispose(stranger, None, [], verdicts)
    assert [a.action.params.reason for a in disposal.actions] == ["emergency", "identity"]


def test_i1_escalation_goes_first_and_keeps_the_open_contexts() -> None:
    """I1/I5, naive rule "act on the majority reading": mid access-gather, 3 samples schedule
    and 2 see a gas leak. The escalation pre-empts; the schedule is not run; contexts kept."""
    gas = [act("escalate", hazard="gas smell in the kitchen")]
    visit = [act("schedule_visit", "WO-204")]
    disposal = dispose(
        package("2 onward. also it smells like gas in here"),
        MARIA,
        [LEAK_204, TAP_198],
        consensus(visit, gas, visit, gas, visit),
    )
    assert disposal.route is Route.ESCALATE
    assert disposal.lanes == (Lane.ESCALATE,)
    preempted = [d for d in disposal.decisions if d.disposition is Disposition.PREEMPTED]
    assert [d.lane for d in preempted] == [Lane.SCHEDULE_VISIT]
    assert all(d.interrupted for d in disposal.decisions)


def test_precheck_escalation_needs_no_brain() -> None:
    precheck = PreCheckResult(
        route=Route.ESCALATE,
        severity="emergency",
        confidence=1.0,
        evidence="gas smell",
        source="safety_floor",
    )
    disposal = dispose(package("I smell gas"), MARIA, [LEAK_204], None, precheck=precheck)
    assert disposal.lanes == (Lane.ESCALATE,)
    assert disposal.decisions[0].stage == "precheck"


def test_handback_route_replies_through_the_assistant() -> None:
    precheck = PreCheckResult(route=Route.HANDBACK, confidence=0.9, source="model")
    disposal = dispose(package("thanks!"), MARIA, [LEAK_204], None, precheck=precheck)
    assert disposal.lanes == (Lane.CONTINUE_WITH_ASSISTANT,)


def test_create_runs_before_the_schedule_that_refers_to_it() -> None:
    plan = [
        act("schedule_visit", "new:1", availability="after 5"),
        act("create_wo", summary="no hot water"),
    ]
    disposal = dispose(package("no hot water, come after 5"), MARIA, [], consensus(*[plan] * 5))
    assert _lanes_and_targets(disposal) == [("create_wo", None), ("schedule_visit", "new:1")]


def test_a_follow_up_of_an_unmade_create_is_rejected() -> None:
    verdicts = consensus(*[[act("schedule_visit", "new:7")]] * 5)
    disposal = dispose(package("come after 5"), MARIA, [LEAK_204], verdicts)
    assert Lane.SCHEDULE_VISIT not in disposal.lanes
    assert disposal.lanes == (Lane.CLARIFY,)


def test_every_queued_action_has_an_idempotency_key_of_package_and_index() -> None:
    plan = [
        act("create_wo", summary="no hot water"),
        act("schedule_visit", "new:1"),
        act("record_rating", "WO-198", stars=4),
    ]
    pkg = package("call transcript")
    disposal = dispose(pkg, MARIA, [LEAK_204, TAP_198], consensus(*[plan] * 5))
    assert [q.idempotency_key for q in disposal.actions] == [
        f"{pkg.package_id}#{i}" for i in range(3)
    ]
    assert len({d.decision_id for d in disposal.decisions}) == len(disposal.decisions)


def test_manage_existing_only_on_the_senders_own_work_orders() -> None:
    mine = [act("manage_existing", operation="cancel", wo_ids=["WO-204"])]
    theirs = [act("manage_existing", operation="cancel", wo_ids=["WO-204", "WO-500"])]
    assert dispose(package("cancel it"), MARIA, [LEAK_204], consensus(*[mine] * 5)).lanes == (
        Lane.MANAGE_EXISTING,
    )
    assert dispose(package("cancel all"), MARIA, [LEAK_204], consensus(*[theirs] * 5)).lanes == (
        Lane.CLARIFY,
    )


def test_no_quorum_falls_back_to_a_recorded_default() -> None:
    verdicts = consensus("transport_error", "timeout", "non_json", "transport_error", "refused")
    disposal = dispose(ACCESS_REPLY, MARIA, [LEAK_204], verdicts)
    assert disposal.lanes == (Lane.ESCALATE,)
    assert disposal.actions[0].action.params.reason == "fallback"
    assert disposal.decisions[-1].fallback


def test_below_threshold_readings_are_recorded_not_dropped_silently() -> None:
    visit = [act("schedule_visit", "WO-204")]
    disposal = dispose(
        ACCESS_REPLY, MARIA, [LEAK_204], consensus(*[visit] * 4, [act("continue_with_assistant")])
    )
    assert disposal.lanes == (Lane.SCHEDULE_VISIT,)
    below = [d for d in disposal.decisions if d.disposition is Disposition.BELOW_THRESHOLD]
    assert [d.lane for d in below] == [Lane.CONTINUE_WITH_ASSISTANT]


def test_one_assistant_reply_at_most() -> None:
    plan = [act("continue_with_assistant", reply_hint="a"), act("relay_to_open_wo", "WO-204")]
    disposal = dispose(package("also the tap"), MARIA, [LEAK_204], consensus(*[plan] * 5))
    assert disposal.lanes.count(Lane.CONTINUE_WITH_ASSISTANT) == 1


def test_a_new_work_orders_visit_runs_right_after_its_create_then_the_rest() -> None:
    """Seed 001: a call that opens a request, says when the tenant is home and mentions an open
    one runs create → schedule → relay, whatever order the samples listed them in."""
    plan = [
        act("relay_to_open_wo", "WO-204", note="the kitchen leak is back"),
        act("create_wo", summary="the hallway light is out", ref="new:1"),
        act("schedule_visit", "new:1", availability="tomorrow after 3"),
    ]
    disposal = dispose(package("light out, home after 3, leak back"), MARIA, [LEAK_204],
                       consensus(*[plan] * 5))  # fmt: skip
    assert _lanes_and_targets(disposal) == [
        ("create_wo", None),
        ("schedule_visit", "new:1"),
        ("relay_to_open_wo", "WO-204"),
    ]
