"""Judge: how urgent a job is, who does it, for how much, who must approve, who is asked first.

:func:`judge` turns a work order (and what its trail says) into a :class:`Judgment`: the
priority, the trade, a not-to-exceed amount and whether the property manager approves it first,
whether it is outside the property's business hours, and up to MAX_OFFERS vendors in the order
they are offered the job, each with why. Its reasons are recorded with it, as a decision.

The policy is the account's (settings) with a property's own amounts over it (the directory's
``approval_over_usd`` and ``nte_usd`` columns).

Pure: no I/O; the caller reads the directory, the open jobs and the ratings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from pydantic import Field, field_validator, model_validator

from maestro.domain.common import Frozen, truncate
from maestro.domain.directory import Property, Trade, Vendor, vendors_for
from maestro.domain.dispatch import MAX_OFFERS, Judgment, RankedVendor
from maestro.domain.gather import job_trade, trade_for
from maestro.domain.models import Urgency, WorkOrder

__all__ = ["NEUTRAL_RATING", "DispatchPolicy", "is_after_hours", "judge"]

NEUTRAL_RATING = 3.0
"""Where a vendor with no recent rating ranks among rated ones: the middle of 1-5 stars, so
a new vendor goes after a well-rated one and before a poorly rated one."""

_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _per_urgency(values: Mapping[Urgency, int], what: str) -> Mapping[Urgency, int]:
    missing = [u.value for u in Urgency if u not in values]
    if missing:
        raise ValueError(f"{what} needs a value for every priority (missing: {missing})")
    return values


class DispatchPolicy(Frozen):
    """The account's dispatch rules (the engine builds it from settings)."""

    nte_usd: dict[Urgency, int] = Field(
        default_factory=lambda: {
            Urgency.ROUTINE: 300,
            Urgency.URGENT: 600,
            Urgency.EMERGENCY: 1500,
        },
        description="Not to exceed, by priority, in US dollars",
    )
    approval_over_usd: int = Field(
        default=500, ge=0, description="A PM approves a job whose NTE is over this"
    )
    offer_timeout_seconds: dict[Urgency, int] = Field(
        default_factory=lambda: {
            Urgency.EMERGENCY: 600,
            Urgency.URGENT: 1800,
            Urgency.ROUTINE: 14400,
        },
        description="How long each vendor has to answer an offer, by priority",
    )
    gather_deadline_seconds: int = Field(default=7200, ge=1)
    approval_timeout_seconds: int = Field(default=3600, ge=1)
    business_hours_start: int = Field(default=8, ge=0, le=23, description="Local hour")
    business_hours_end: int = Field(default=18, ge=1, le=24, description="Local hour, excluded")
    business_days: tuple[int, ...] = Field(
        default=(0, 1, 2, 3, 4), description="Weekdays open, Monday = 0"
    )

    @field_validator("nte_usd")
    @classmethod
    def _every_nte(cls, value: dict[Urgency, int]) -> dict[Urgency, int]:
        _per_urgency(value, "nte_usd")
        if any(amount < 0 for amount in value.values()):
            raise ValueError("nte_usd amounts must not be negative")
        return value

    @field_validator("offer_timeout_seconds")
    @classmethod
    def _every_timeout(cls, value: dict[Urgency, int]) -> dict[Urgency, int]:
        _per_urgency(value, "offer_timeout_seconds")
        if any(seconds < 1 for seconds in value.values()):
            raise ValueError("offer timeouts must be at least 1 second")
        return value

    @field_validator("business_days")
    @classmethod
    def _weekdays(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(day not in range(7) for day in value):
            raise ValueError("business_days are weekdays 0 (Monday) to 6 (Sunday)")
        return tuple(sorted(set(value)))

    @model_validator(mode="after")
    def _hours_ordered(self) -> DispatchPolicy:
        if self.business_hours_end <= self.business_hours_start:
            raise ValueError("business hours must end after they start")
        return self

    def hours_text(self) -> str:
        days = ",".join(_WEEKDAYS[d] for d in self.business_days) or "no days"
        return f"{days} {self.business_hours_start:02d}:00-{self.business_hours_end:02d}:00"


def is_after_hours(now: datetime, timezone: str, policy: DispatchPolicy) -> bool:
    """Whether ``now`` is outside the business hours, read on the property's clock."""
    local = now.astimezone(ZoneInfo(timezone))
    return local.weekday() not in policy.business_days or not (
        policy.business_hours_start <= local.hour < policy.business_hours_end
    )


def _priority(wo: WorkOrder, trail_emergency: bool) -> tuple[Urgency, str]:
    if trail_emergency and wo.urgency is not Urgency.EMERGENCY:
        return Urgency.EMERGENCY, (
            f"priority emergency: the trail reports an emergency (the WO says {wo.urgency.value})"
        )
    return wo.urgency, f"priority {wo.urgency.value}: the work order's urgency"


def _trade(wo: WorkOrder, notes: Sequence[str]) -> tuple[Trade, str]:
    named = trade_for(wo.category)
    if named is not None:
        return named, f"trade {named.value}: the category {wo.category!r}"
    read = job_trade(wo, notes)
    if read is not None:
        return read, f"trade {read.value}: read from the problem's words"
    return Trade.GENERAL, "trade general: neither the category nor the words name one"


def _rating_text(rating: float | None) -> str:
    return "no recent rating" if rating is None else f"rated {rating:.1f}"


def judge(
    wo: WorkOrder,
    *,
    trail_emergency: bool,
    vendors: Sequence[Vendor],
    open_jobs: Mapping[str, int],
    ratings: Mapping[str, float | None],
    property: Property | None,
    policy: DispatchPolicy,
    now: datetime,
    notes: Sequence[str] = (),
) -> Judgment:
    """The judgment for ``wo`` (see the module's docstring). ``vendors`` may be the whole
    directory's: only those of the trade serving the WO's property count. ``notes`` (the WO's
    timeline notes) are read for the trade when the category names none."""
    reasons: list[str] = []

    priority, why = _priority(wo, trail_emergency)
    reasons.append(why)

    trade, why = _trade(wo, notes)
    reasons.append(why)

    if property is not None and property.nte_usd is not None:
        nte = property.nte_usd
        reasons.append(f"NTE ${nte}: {property.property_id}'s own limit")
    else:
        nte = policy.nte_usd[priority]
        reasons.append(f"NTE ${nte}: the {priority.value} default")

    if property is not None and property.approval_over_usd is not None:
        limit, whose = property.approval_over_usd, f"{property.property_id}'s"
    else:
        limit, whose = policy.approval_over_usd, "the default"
    if priority is Urgency.EMERGENCY:
        approval = False
        reasons.append("no approval: an emergency is never held for one")
    elif nte > limit:
        approval = True
        reasons.append(f"approval needed: ${nte} is over {whose} ${limit} limit")
    else:
        approval = False
        reasons.append(f"no approval: ${nte} is within {whose} ${limit} limit")

    timezone = property.timezone if property is not None else "UTC"
    after_hours = is_after_hours(now, timezone, policy)
    local = now.astimezone(ZoneInfo(timezone))
    clock = f"{_WEEKDAYS[local.weekday()]} {local:%H:%M} {timezone}"
    only_after_hours = after_hours and priority in (Urgency.URGENT, Urgency.EMERGENCY)
    if only_after_hours:
        reasons.append(f"after hours ({clock}), {priority.value} work: after-hours vendors only")
    elif after_hours:
        reasons.append(f"after hours ({clock}); routine work: any vendor")
    else:
        reasons.append(f"business hours ({clock})")

    property_id = wo.property_id or (property.property_id if property is not None else None)
    candidates = vendors_for(vendors, property_id, trade, after_hours=only_after_hours)

    def preference(vendor: Vendor) -> tuple[int, int, float, str]:
        rating = ratings.get(vendor.vendor_id)
        return (
            vendor.rank,
            open_jobs.get(vendor.vendor_id, 0),
            -(NEUTRAL_RATING if rating is None else rating),
            vendor.vendor_id,
        )

    chosen = sorted(candidates, key=preference)[:MAX_OFFERS]
    ranked = tuple(
        RankedVendor(
            vendor_id=v.vendor_id,
            name=v.name,
            rank=v.rank,
            after_hours=v.after_hours,
            open_jobs=open_jobs.get(v.vendor_id, 0),
            rating=ratings.get(v.vendor_id),
            why=truncate(
                f"#{n}: {trade.value}, directory rank {v.rank}, "
                f"{open_jobs.get(v.vendor_id, 0)} open jobs, "
                f"{_rating_text(ratings.get(v.vendor_id))}"
                + (", takes after-hours calls" if only_after_hours else ""),
                200,
            ),
        )
        for n, v in enumerate(chosen, 1)
    )
    where = property_id or "an unknown property"
    if ranked:
        reasons.append(
            f"{len(candidates)} {trade.value} vendor(s) serve {where}"
            + (" after hours" if only_after_hours else "")
            + f"; offering to {len(ranked)} in order: "
            + ", ".join(v.vendor_id for v in ranked)
        )
    else:
        reasons.append(
            f"no {trade.value} vendor serves {where}"
            + (" after hours" if only_after_hours else "")
            + ": the on-call PM is paged"
        )

    return Judgment(
        priority=priority,
        trade=trade,
        nte_usd=nte,
        approval_needed=approval,
        after_hours=after_hours,
        vendors=ranked,
        reasons=tuple(reasons),
        offer_timeout_seconds=policy.offer_timeout_seconds[priority],
    )
