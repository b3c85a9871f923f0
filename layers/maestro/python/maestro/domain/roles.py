"""Who may do what to a work order: the role rules, in one table.

A party's part in a work order is its tenant, its vendor, or a PM of the WO's property (a PM
manages the properties in ``Party.property_ids``; a WO of another property, or of none recorded,
is not theirs). Dispose refuses an action whose sender has no part that allows it, and each lane
checks again against the WO as stored when it runs: a rating only from the WO's tenant (or its
PM); a vendor's message never opens, cancels, rates or relays on another party's behalf; a new
WO only from a tenant (it is opened in their name).
"""

from __future__ import annotations

from typing import Literal

from maestro.domain.actions import Lane
from maestro.domain.models import Party, PartyRole, WorkOrder

__all__ = [
    "MANAGE_OPERATIONS",
    "PM_CONTEXTS",
    "ROLE_RULES",
    "Part",
    "allowed",
    "manages",
    "may_manage",
    "part_in",
    "part_of",
]

Part = Literal["tenant", "vendor", "pm"]

PM_CONTEXTS = 8
"""A PM's work orders as open contexts, at most (those their text names first, then their
properties' open ones): what the brain sees stays bounded however many they manage."""

_ANYONE: frozenset[Part] = frozenset({"tenant", "vendor", "pm"})
ROLE_RULES: dict[Lane, frozenset[Part]] = {
    Lane.CREATE_WO: frozenset({"tenant"}),
    Lane.RELAY_TO_OPEN_WO: _ANYONE,
    Lane.SCHEDULE_VISIT: _ANYONE,
    Lane.RECORD_RATING: frozenset({"tenant", "pm"}),
    Lane.RELAY_TO_VENDOR: frozenset({"tenant", "pm"}),
    # Which manage operation each part may ask for: MANAGE_OPERATIONS (a vendor only reports
    # their own job done, and lists their jobs).
    Lane.MANAGE_EXISTING: _ANYONE,
    Lane.CONTINUE_WITH_ASSISTANT: _ANYONE,
    Lane.CLARIFY: _ANYONE,
    Lane.ESCALATE: _ANYONE,
    # Only the party a wait is for answers it (the lane checks the run's wait, not the WO: an
    # offered vendor is not on the WO yet).
    Lane.ANSWER_WAIT: frozenset({"vendor", "pm"}),
}

MANAGE_OPERATIONS: dict[str, frozenset[Part]] = {
    "list": _ANYONE,
    "cancel": frozenset({"tenant", "pm"}),
    "reschedule": frozenset({"tenant", "pm"}),
    # The vendor reports it done, the tenant confirms the report, a PM closes it (held until
    # their YES): docs/completion.md.
    "complete": _ANYONE,
}

if set(ROLE_RULES) != set(Lane):  # pragma: no cover - holds by construction
    raise AssertionError("every lane needs a role rule")


def manages(sender: Party | None, property_id: str | None) -> bool:
    """Whether ``sender`` is a PM of ``property_id`` (a WO with no property is nobody's to manage:
    a PM is never given a WO by default)."""
    return (
        sender is not None
        and sender.role is PartyRole.PM
        and property_id is not None
        and property_id in sender.property_ids
    )


def part_in(
    sender: Party | None,
    tenant_id: str | None,
    vendor_id: str | None,
    property_id: str | None = None,
) -> Part | None:
    """The sender's part in a work order with these parties, of this property (None: none)."""
    if sender is None:
        return None
    if sender.role is PartyRole.PM:
        return "pm" if manages(sender, property_id) else None
    if sender.party_id == tenant_id:
        return "tenant"
    if vendor_id is not None and sender.party_id == vendor_id:
        return "vendor"
    return None


def allowed(lane: Lane, part: Part | None) -> bool:
    return part is not None and part in ROLE_RULES[lane]


def may_manage(operation: str, part: Part | None) -> bool:
    """Whether a party with ``part`` in a work order may ask for this manage operation on it."""
    return part is not None and part in MANAGE_OPERATIONS.get(operation, frozenset())


def part_of(sender: Party | None, wo: WorkOrder) -> Part | None:
    """The sender's part in ``wo`` as stored."""
    return part_in(sender, wo.tenant_id, wo.vendor_id, wo.property_id)
