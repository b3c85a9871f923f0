"""Test-only stand-ins for the pure dispatch domain (issue 19), until it lands on main.

``maestro.domain.gather``, ``judge`` and ``dispatch_texts`` are written by another part at the
same time (their signatures are in the design every part follows). Until they are on main, the
tests of the work order machine's steps run against these minimal versions of those
signatures, installed by ``tests/conftest.py`` only when the real modules are missing: once the
real ones land, they are what every test runs. Never imported by runtime code.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping, Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from maestro.domain.common import Frozen
from maestro.domain.directory import Property, Trade, Vendor
from maestro.domain.dispatch import MAX_OFFERS, DispatchRun, GatherItem, Judgment, RankedVendor
from maestro.domain.models import Urgency, WorkOrder

# -- gather ---------------------------------------------------------------------------------------


def trade_for(category: str) -> Trade | None:
    try:
        return Trade(category)
    except ValueError:
        return None


def skip_reason(wo: WorkOrder) -> str | None:
    return "urgent: no time to ask" if wo.urgency is not Urgency.ROUTINE else None


def needs(wo: WorkOrder, notes: Sequence[str], photos: int) -> tuple[GatherItem, ...]:
    """Stand-in rule: a WO with no note yet lacks access and availability."""
    return () if notes else ("access", "availability")


def items_in(text: str) -> tuple[GatherItem, ...]:
    return ("access", "availability") if text.strip() else ()


def question(wo: WorkOrder, missing: Sequence[GatherItem], language: str) -> str:
    return f"About {wo.wo_id}: so a vendor can come, please tell us {', '.join(missing)}."


# -- judge ----------------------------------------------------------------------------------------


class DispatchPolicy(Frozen):
    nte_usd: Mapping[Urgency, int]
    approval_over_usd: int
    offer_timeout_seconds: Mapping[Urgency, int]
    gather_deadline_seconds: int
    approval_timeout_seconds: int
    business_hours_start: int = 8
    business_hours_end: int = 18
    business_days: tuple[int, ...] = (0, 1, 2, 3, 4)


def is_after_hours(now: datetime, timezone: str, policy: DispatchPolicy) -> bool:
    local = now.astimezone(ZoneInfo(timezone))
    open_now = policy.business_hours_start <= local.hour < policy.business_hours_end
    return not (open_now and local.weekday() in policy.business_days)


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
    priority = Urgency.EMERGENCY if trail_emergency else wo.urgency
    after_hours = is_after_hours(now, property.timezone if property else "UTC", policy)
    trade = trade_for(wo.category) or Trade.GENERAL
    only_after_hours = after_hours and priority is not Urgency.ROUTINE
    pool = [v for v in vendors if trade in v.trades and (v.after_hours or not only_after_hours)]
    pool.sort(key=lambda v: (v.rank, open_jobs.get(v.vendor_id, 0), v.vendor_id))
    nte = policy.nte_usd[priority]
    return Judgment(
        priority=priority,
        trade=trade,
        nte_usd=nte,
        approval_needed=priority is not Urgency.EMERGENCY and nte > policy.approval_over_usd,
        after_hours=after_hours,
        vendors=tuple(
            RankedVendor(
                vendor_id=v.vendor_id,
                name=v.name,
                rank=i + 1,
                after_hours=v.after_hours,
                open_jobs=open_jobs.get(v.vendor_id, 0),
                rating=ratings.get(v.vendor_id),
            )
            for i, v in enumerate(pool[:MAX_OFFERS])
        ),
        offer_timeout_seconds=policy.offer_timeout_seconds[priority],
    )


# -- dispatch_texts -------------------------------------------------------------------------------


def offer_text(
    wo: WorkOrder,
    vendor: Vendor,
    property: Property | None,
    unit_label: str | None,
    judgment: Judgment,
    index: int,
    language: str,
) -> str:
    where = f"{property.name if property else 'the property'}, unit {unit_label or '?'}"
    return (
        f"New {judgment.trade.value} job {wo.wo_id} at {where}, up to ${judgment.nte_usd}. "
        f"Reply 1 to accept {wo.wo_id}, 2 to decline."
    )


def assigned_vendor_text(
    wo: WorkOrder,
    property: Property | None,
    unit_label: str | None,
    access_notes: Sequence[str],
    language: str,
) -> str:
    where = f"{property.address if property else ''} unit {unit_label or '?'}"
    return f"{wo.wo_id} is yours: {where}. Access: {'; '.join(access_notes) or 'ask the tenant'}."


def tenant_coming_text(wo: WorkOrder, vendor: Vendor, language: str) -> str:
    return f"{vendor.name} has accepted {wo.wo_id} and will contact you to arrange the visit."


def approval_text(wo: WorkOrder, judgment: Judgment, language: str) -> str:
    return f"Approve {wo.wo_id} up to ${judgment.nte_usd}? YES/NO"


def withdrawn_text(wo: WorkOrder, reason: str, language: str) -> str:
    return f"{wo.wo_id} was cancelled; the offer is withdrawn."


def lapsed_text(wo: WorkOrder, language: str) -> str:
    return f"The offer of {wo.wo_id} has lapsed; no need to reply."


def no_vendor_page(wo: WorkOrder, run: DispatchRun, trail: Sequence[str]) -> str:
    offers = ", ".join(f"{o.vendor_id}: {o.outcome}" for o in run.offers) or "no vendor offered"
    return f"{wo.wo_id}: no vendor took it ({offers}). {' / '.join(trail)}"[:600]


_MODULES = {
    "gather": (trade_for, skip_reason, needs, items_in, question),
    "judge": (DispatchPolicy, is_after_hours, judge),
    "dispatch_texts": (
        offer_text,
        assigned_vendor_text,
        tenant_coming_text,
        approval_text,
        withdrawn_text,
        lapsed_text,
        no_vendor_page,
    ),
}


def install() -> list[str]:
    """Put each missing module in place (sys.modules and the package); the names installed."""
    import importlib

    import maestro.domain as package

    installed = []
    for name, members in _MODULES.items():
        full = f"maestro.domain.{name}"
        try:
            importlib.import_module(full)
            continue
        except ModuleNotFoundError as missing:
            if missing.name != full:
                raise
        module = types.ModuleType(full, f"test stand-in for {full} (tests/dispatch_standins.py)")
        for member in members:
            setattr(module, member.__name__, member)
        sys.modules[full] = module
        setattr(package, name, module)
        installed.append(full)
    return installed
