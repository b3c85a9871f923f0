"""Judge (maestro.domain.judge): the policy, after hours, and the judgment's every rule."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import pytest
from builders import work_order
from pydantic import ValidationError

from maestro.domain.directory import Property, Trade, Vendor
from maestro.domain.dispatch import MAX_OFFERS, Judgment
from maestro.domain.judge import DispatchPolicy, is_after_hours, judge
from maestro.domain.models import Urgency, WorkOrder

LARCH = Property(property_id="larch", name="Larch Terrace", timezone="America/Denver")
POLICY = DispatchPolicy()

# Daylight time began in Denver on 2027-03-14: these days are MDT, UTC-6.
TUESDAY_10AM = datetime(2027, 3, 16, 16, 0, tzinfo=UTC)  # Tue 10:00 in Denver
TUESDAY_7PM = datetime(2027, 3, 17, 1, 0, tzinfo=UTC)  # Tue 19:00 in Denver
SATURDAY_NOON = datetime(2027, 3, 20, 18, 0, tzinfo=UTC)  # Sat 12:00 in Denver


def vendor(vendor_id: str, *trades: Trade, rank: int = 1, **extra: object) -> Vendor:
    return Vendor(
        vendor_id=vendor_id,
        name=extra.pop("name", vendor_id.title()),  # type: ignore[arg-type]
        phone=extra.pop("phone", "+17205550100"),  # type: ignore[arg-type]
        trades=trades or (Trade.PLUMBING,),
        rank=rank,
        **extra,  # type: ignore[arg-type]
    )


def judged(
    wo: WorkOrder,
    vendors: Sequence[Vendor] = (),
    *,
    trail_emergency: bool = False,
    open_jobs: Mapping[str, int] | None = None,
    ratings: Mapping[str, float | None] | None = None,
    property: Property | None = LARCH,
    policy: DispatchPolicy = POLICY,
    now: datetime = TUESDAY_10AM,
    notes: Sequence[str] = (),
) -> Judgment:
    return judge(
        wo,
        trail_emergency=trail_emergency,
        vendors=vendors,
        open_jobs=open_jobs or {},
        ratings=ratings or {},
        property=property,
        policy=policy,
        now=now,
        notes=notes,
    )


# --- the policy ---------------------------------------------------------------------------------


def test_the_default_policy_is_the_issues() -> None:
    assert POLICY.nte_usd == {Urgency.ROUTINE: 300, Urgency.URGENT: 600, Urgency.EMERGENCY: 1500}
    assert POLICY.approval_over_usd == 500
    assert POLICY.offer_timeout_seconds == {
        Urgency.EMERGENCY: 600,
        Urgency.URGENT: 1800,
        Urgency.ROUTINE: 14400,
    }
    assert POLICY.gather_deadline_seconds == 7200
    assert POLICY.approval_timeout_seconds == 3600
    assert (POLICY.business_hours_start, POLICY.business_hours_end) == (8, 18)
    assert POLICY.business_days == (0, 1, 2, 3, 4)


@pytest.mark.parametrize(
    "bad",
    [
        {"nte_usd": {Urgency.ROUTINE: 100, Urgency.URGENT: 200}},  # no emergency amount
        {"nte_usd": {Urgency.ROUTINE: -1, Urgency.URGENT: 1, Urgency.EMERGENCY: 1}},
        {"offer_timeout_seconds": {Urgency.ROUTINE: 60, Urgency.URGENT: 0, Urgency.EMERGENCY: 1}},
        {"business_hours_start": 17, "business_hours_end": 9},
        {"business_days": (0, 7)},
        {"approval_over_usd": -5},
    ],
)
def test_a_policy_that_cannot_be_applied_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        DispatchPolicy.model_validate(bad)


def test_a_policy_is_read_from_plain_settings_values() -> None:
    policy = DispatchPolicy.model_validate(
        {"nte_usd": {"routine": 250, "urgent": 450, "emergency": 2000}, "business_days": [5, 0]}
    )
    assert policy.nte_usd[Urgency.URGENT] == 450
    assert policy.business_days == (0, 5)


# --- after hours --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("now", "after"),
    [
        (TUESDAY_10AM, False),
        (TUESDAY_7PM, True),
        (SATURDAY_NOON, True),
        (datetime(2027, 3, 16, 14, 0, tzinfo=UTC), False),  # 08:00 sharp: open
        (datetime(2027, 3, 16, 13, 59, tzinfo=UTC), True),  # 07:59: not yet
        (datetime(2027, 3, 17, 0, 0, tzinfo=UTC), True),  # 18:00 sharp: closed
        (datetime(2027, 3, 16, 23, 59, tzinfo=UTC), False),  # 17:59: still open
    ],
)
def test_business_hours_are_read_on_the_propertys_clock(now: datetime, after: bool) -> None:
    assert is_after_hours(now, "America/Denver", POLICY) is after


def test_the_same_instant_is_in_hours_in_one_zone_and_after_in_another() -> None:
    # Tue 16:00 UTC: 10:00 in Denver, 01:00 Wednesday in Tokyo.
    assert not is_after_hours(TUESDAY_10AM, "America/Denver", POLICY)
    assert is_after_hours(TUESDAY_10AM, "Asia/Tokyo", POLICY)


def test_a_policy_with_weekend_hours_opens_on_saturday() -> None:
    weekends = DispatchPolicy(business_days=(5, 6), business_hours_start=9, business_hours_end=13)
    assert not is_after_hours(SATURDAY_NOON, "America/Denver", weekends)
    assert is_after_hours(TUESDAY_10AM, "America/Denver", weekends)


# --- priority, trade ----------------------------------------------------------------------------


@pytest.mark.parametrize("urgency", list(Urgency))
def test_the_priority_is_the_work_orders_urgency(urgency: Urgency) -> None:
    assert judged(work_order(urgency=urgency)).priority is urgency


@pytest.mark.parametrize("urgency", list(Urgency))
def test_a_trail_that_reports_an_emergency_raises_any_priority_to_emergency(
    urgency: Urgency,
) -> None:
    judgment = judged(work_order(urgency=urgency), trail_emergency=True)
    assert judgment.priority is Urgency.EMERGENCY
    assert judgment.offer_timeout_seconds == 600
    if urgency is not Urgency.EMERGENCY:
        assert any("trail reports an emergency" in r for r in judgment.reasons)


def test_the_trade_is_the_categorys_then_the_words_then_general() -> None:
    assert judged(work_order(category="hvac", summary="mold on the wall")).trade is Trade.HVAC
    assert judged(work_order(summary="wasps nesting by the porch")).trade is Trade.PEST
    vague = work_order(summary="a weird noise")
    assert judged(vague).trade is Trade.GENERAL
    assert judged(vague, notes=["it's coming from the fuse box"]).trade is Trade.ELECTRICAL


# --- amount and approval ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("urgency", "nte", "approval"),
    [
        (Urgency.ROUTINE, 300, False),
        (Urgency.URGENT, 600, True),  # over 500
        (Urgency.EMERGENCY, 1500, False),  # never held for approval
    ],
)
def test_the_default_amounts_and_who_approves(urgency: Urgency, nte: int, approval: bool) -> None:
    judgment = judged(work_order(urgency=urgency))
    assert (judgment.nte_usd, judgment.approval_needed) == (nte, approval)


def test_an_amount_equal_to_the_limit_needs_no_approval() -> None:
    policy = DispatchPolicy(approval_over_usd=600)
    assert not judged(work_order(urgency=Urgency.URGENT), policy=policy).approval_needed


def test_a_propertys_own_limit_and_amount_override_the_policy() -> None:
    generous = LARCH.model_copy(update={"approval_over_usd": 1000})
    assert not judged(work_order(urgency=Urgency.URGENT), property=generous).approval_needed

    strict = LARCH.model_copy(update={"approval_over_usd": 100})
    judgment = judged(work_order(), property=strict)
    assert judgment.approval_needed
    assert any("larch's $100 limit" in r for r in judgment.reasons)

    capped = LARCH.model_copy(update={"nte_usd": 800})
    judgment = judged(work_order(urgency=Urgency.ROUTINE), property=capped)
    assert judgment.nte_usd == 800
    assert judgment.approval_needed  # 800 over the default 500
    emergency = judged(work_order(urgency=Urgency.EMERGENCY), property=capped)
    assert (emergency.nte_usd, emergency.approval_needed) == (800, False)


def test_a_property_amount_of_zero_is_an_amount_not_a_missing_one() -> None:
    nothing_without_asking = LARCH.model_copy(update={"approval_over_usd": 0})
    assert judged(work_order(), property=nothing_without_asking).approval_needed


# --- vendors ------------------------------------------------------------------------------------


def test_only_vendors_of_the_trade_serving_the_property_are_offered() -> None:
    vendors = [
        vendor("v-here", Trade.PLUMBING, property_ids=("larch",)),
        vendor("v-everywhere", Trade.PLUMBING),  # '*'
        vendor("v-elsewhere", Trade.PLUMBING, property_ids=("spruce",)),
        vendor("v-sparks", Trade.ELECTRICAL),
    ]
    judgment = judged(work_order(category="plumbing"), vendors)
    assert [v.vendor_id for v in judgment.vendors] == ["v-everywhere", "v-here"]


def test_the_directory_rank_comes_first_then_fewer_open_jobs_then_a_better_rating() -> None:
    vendors = [
        vendor("v-second", rank=2),
        vendor("v-busy", rank=1),
        vendor("v-free-low", rank=1),
        vendor("v-free-high", rank=1),
    ]
    judgment = judged(
        work_order(category="plumbing"),
        vendors,
        open_jobs={"v-busy": 3, "v-second": 0},
        ratings={"v-free-low": 3.5, "v-free-high": 4.8, "v-busy": 5.0},
    )
    assert [v.vendor_id for v in judgment.vendors] == ["v-free-high", "v-free-low", "v-busy"]
    assert len(judgment.vendors) == MAX_OFFERS  # v-second is not offered
    first = judgment.vendors[0]
    assert (first.open_jobs, first.rating) == (0, 4.8)
    assert "rated 4.8" in first.why
    assert "3 open jobs" in judgment.vendors[2].why


def test_a_vendor_with_no_recent_rating_ranks_between_good_and_poor_ones() -> None:
    vendors = [vendor("v-new"), vendor("v-poor"), vendor("v-good")]
    judgment = judged(
        work_order(category="plumbing"), vendors, ratings={"v-poor": 2.1, "v-good": 4.0}
    )
    assert [v.vendor_id for v in judgment.vendors] == ["v-good", "v-new", "v-poor"]
    assert "no recent rating" in judgment.vendors[1].why


def test_urgent_work_after_hours_goes_to_after_hours_vendors_only() -> None:
    vendors = [vendor("v-day"), vendor("v-night", rank=2, after_hours=True)]
    night = judged(
        work_order(category="plumbing", urgency=Urgency.URGENT), vendors, now=TUESDAY_7PM
    )
    assert night.after_hours
    assert [v.vendor_id for v in night.vendors] == ["v-night"]
    assert "takes after-hours calls" in night.vendors[0].why

    day = judged(work_order(category="plumbing", urgency=Urgency.URGENT), vendors)
    assert not day.after_hours
    assert [v.vendor_id for v in day.vendors] == ["v-day", "v-night"]


def test_routine_work_after_hours_may_go_to_any_vendor() -> None:
    vendors = [vendor("v-day"), vendor("v-night", rank=2, after_hours=True)]
    judgment = judged(work_order(category="plumbing"), vendors, now=SATURDAY_NOON)
    assert judgment.after_hours  # recorded as it is...
    assert [v.vendor_id for v in judgment.vendors] == ["v-day", "v-night"]  # ...but no filter


def test_an_emergency_the_trail_reported_at_night_needs_an_after_hours_vendor() -> None:
    vendors = [vendor("v-day")]
    judgment = judged(
        work_order(category="plumbing"), vendors, trail_emergency=True, now=TUESDAY_7PM
    )
    assert judgment.vendors == ()
    assert any("no plumbing vendor serves larch after hours" in r for r in judgment.reasons)


def test_without_a_property_record_the_clock_is_utc_and_coverage_is_the_wos_property() -> None:
    vendors = [vendor("v-larch", property_ids=("larch",))]
    # 16:00 UTC on a Tuesday: in hours on UTC.
    judgment = judged(work_order(category="plumbing"), vendors, property=None)
    assert not judgment.after_hours
    assert [v.vendor_id for v in judgment.vendors] == ["v-larch"]
    assert judgment.nte_usd == 300


def test_the_reasons_say_each_decision() -> None:
    judgment = judged(work_order(category="plumbing", urgency=Urgency.URGENT), [vendor("v-one")])
    assert judgment.reasons == (
        "priority urgent: the work order's urgency",
        "trade plumbing: the category 'plumbing'",
        "NTE $600: the urgent default",
        "approval needed: $600 is over the default $500 limit",
        "business hours (Tue 10:00 America/Denver)",
        "1 plumbing vendor(s) serve larch; offering to 1 in order: v-one",
    )


@pytest.mark.parametrize(
    ("urgency", "seconds"),
    [(Urgency.ROUTINE, 14400), (Urgency.URGENT, 1800), (Urgency.EMERGENCY, 600)],
)
def test_each_offers_wait_is_the_priority_s(urgency: Urgency, seconds: int) -> None:
    assert judged(work_order(urgency=urgency)).offer_timeout_seconds == seconds
