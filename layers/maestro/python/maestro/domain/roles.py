"""Who may do what to a work order: the role rules, in one table.

A party's part in a work order is its tenant, its vendor, or a PM (who may act on any). Dispose
refuses an action whose sender has no part that allows it, and each lane checks again against
the WO as stored when it runs: a rating only from the WO's tenant (or a PM); a vendor's message
never opens, cancels, rates or relays on another party's behalf; a new WO only from a tenant (it
is opened in their name).
"""

from __future__ import annotations

from typing import Literal

from maestro.domain.actions import Lane
from maestro.domain.models import Party, PartyRole

__all__ = ["ROLE_RULES", "Part", "allowed", "part_in"]

Part = Literal["tenant", "vendor", "pm"]

_ANYONE: frozenset[Part] = frozenset({"tenant", "vendor", "pm"})
ROLE_RULES: dict[Lane, frozenset[Part]] = {
    Lane.CREATE_WO: frozenset({"tenant"}),
    Lane.RELAY_TO_OPEN_WO: _ANYONE,
    Lane.SCHEDULE_VISIT: _ANYONE,
    Lane.RECORD_RATING: frozenset({"tenant", "pm"}),
    Lane.RELAY_TO_VENDOR: frozenset({"tenant", "pm"}),
    Lane.MANAGE_EXISTING: frozenset({"tenant", "pm"}),
    Lane.CONTINUE_WITH_ASSISTANT: _ANYONE,
    Lane.CLARIFY: _ANYONE,
    Lane.ESCALATE: _ANYONE,
}

if set(ROLE_RULES) != set(Lane):  # pragma: no cover - holds by construction
    raise AssertionError("every lane needs a role rule")


def part_in(sender: Party | None, tenant_id: str | None, vendor_id: str | None) -> Part | None:
    """The sender's part in a work order with these parties (None: it has none)."""
    if sender is None:
        return None
    if sender.role is PartyRole.PM:
        return "pm"
    if sender.party_id == tenant_id:
        return "tenant"
    if vendor_id is not None and sender.party_id == vendor_id:
        return "vendor"
    return None


def allowed(lane: Lane, part: Part | None) -> bool:
    return part is not None and part in ROLE_RULES[lane]
