"""The scenario format: a world, the turns people send, an optional script for the model, and
checkpoints graded from real reads.

A scenario is YAML (``evals/scenarios/*.yaml``; JSON Schema ``evals/scenario.schema.json``,
generated from these models). Times are offsets: ``"72h"`` or ``"-3d"`` from the scenario's
start, ``"+5m"`` after the step before. The embedded stack's clock is virtual, so a three-day
gap costs nothing.

- ``world``: the parties (id, role, phone, name, unit), the work orders (id, tenant, vendor,
  status, description, rating_requested, opened_at) and optional prior messages, which are
  played through the real inbound path before the first turn (so the decisions they lead to
  are real ones);
- ``turns``: in order, ``{at, from, channel, text}`` (``from`` is a party id or a raw phone),
  ``{flush: idle | kickoff | conversation_ended | max_wait}`` and ``{update: WO id, status}`` (a
  change made outside the conversation, e.g. the vendor completing the job);
- ``model``: optional scripted answers for offline, deterministic runs of the model path: per
  purpose, in call order, and rules that answer whatever call mentions a text;
- ``checkpoints``: ``{after: <turn index>, id, expect}``; ``expect`` is graded on the packages
  the turns since the previous checkpoint produced, from the decision log, the WO store, the
  messages as the messaging surface returns them, and the ledger's evidence and shame.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from maestro.domain.common import Frozen
from maestro.domain.directory import (
    ALL_PROPERTIES,
    Directory,
    Person,
    PersonRole,
    Property,
    Trade,
    Unit,
    Vendor,
)
from maestro.domain.models import Party, PartyRole, WorkOrder, WorkOrderStatus, WoSnapshot
from maestro.domain.records import MaestroState, OutstandingItem

__all__ = [
    "Checkpoint",
    "DecisionExpect",
    "Expect",
    "FlushStep",
    "MessageExpect",
    "ModelRule",
    "ModelScript",
    "PartySpec",
    "PriorMessage",
    "Scenario",
    "Step",
    "TurnStep",
    "UpdateStep",
    "WaitStep",
    "WorkOrderExpect",
    "WorkOrderSpec",
    "World",
    "offset",
]

_OFFSET = re.compile(r"^([+-])?(\d+(?:\.\d+)?)(s|m|h|d)$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DEFAULT_START = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)
WORLD_PROPERTY = Property(property_id="world", name="The world's property")
"""Where a world's units are: a scenario names units, not properties."""
_NOT_IN_ID = re.compile(r"[^A-Za-z0-9._:@-]+")


def is_relative(text: str) -> bool:
    """``"+5m"`` counts from the step before; ``"72h"`` and ``"-3d"`` from the start."""
    return text.strip().startswith("+")


def offset(text: str | int | float) -> timedelta:
    """``"+5m"``, ``"72h"``, ``"-3d"``, ``"90s"`` or a number of seconds, as a timedelta."""
    if isinstance(text, int | float):
        return timedelta(seconds=text)
    match = _OFFSET.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"a time offset looks like '+5m', '72h' or '-3d', not {text!r}")
    sign = -1 if match.group(1) == "-" else 1
    return timedelta(seconds=sign * float(match.group(2)) * _UNITS[match.group(3)])


class _Spec(Frozen):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class PartySpec(_Spec):
    id: str = Field(min_length=1)
    role: Literal["tenant", "vendor", "pm"]
    phone: str = Field(pattern=r"^\+[1-9]\d{6,14}$")
    name: str = ""
    unit: str | None = None
    trades: tuple[Trade, ...] = Field(
        default=(), description="A vendor's trades (general when none are given)"
    )
    properties: tuple[str, ...] = Field(
        default=(),
        description="A tenant's property (one), a PM's managed ones, a vendor's served ones "
        "(Party.property_ids); none: the world's one property (every property, for a vendor)",
    )
    rank: int = Field(default=1, ge=1, description="A vendor's preference: 1 is offered first")
    after_hours: bool = Field(default=False, description="A vendor who takes after-hours work")


class WorkOrderSpec(_Spec):
    id: str = Field(min_length=1)
    tenant: str = Field(description="The tenant's party id")
    vendor: str | None = Field(default=None, description="The vendor's party id")
    status: Literal[
        "open",
        "assigned",
        "scheduled",
        "in_progress",
        "completion_reported",
        "completed",
        "cancelled",
    ] = "open"
    description: str = Field(min_length=1)
    category: str = "general"
    unit: str | None = None
    property: str | None = Field(
        default=None, description="Its property; else the tenant's, when they have exactly one"
    )
    rating_requested: bool = False
    awaiting: Literal["nothing", "availability"] = Field(
        default="nothing",
        description="'availability': the vendor's access question is out to the tenant",
    )
    asked_at: str = Field(default="-20m", description="When that question was asked")
    opened_at: str = Field(default="-3h", description="An offset from the scenario's start")
    updated_at: str = Field(default="-1h")

    @field_validator("opened_at", "updated_at", "asked_at")
    @classmethod
    def _an_offset(cls, value: str) -> str:
        offset(value)
        return value


class PriorMessage(_Spec):
    """A text sent before the scenario starts (``at`` is negative), through the real path."""

    at: str = Field(default="-1d", description="Before the start: '-3d', '-2h'")
    from_: str = Field(alias="from")
    channel: Literal["sms", "call", "app"] = "sms"
    text: str

    @field_validator("at")
    @classmethod
    def _before_the_start(cls, value: str) -> str:
        if offset(value).total_seconds() >= 0 or is_relative(value):
            raise ValueError("a prior message is before the start: '-1d', '-3h'")
        return value


class World(_Spec):
    base: str | None = Field(
        default=None,
        description="A named world of evals/worlds/ to start from: its parties and work orders, "
        "which the scenario's own (by id) add to or replace; the loader merges them",
    )
    start: datetime = DEFAULT_START
    parties: tuple[PartySpec, ...] = ()
    work_orders: tuple[WorkOrderSpec, ...] = ()
    messages: tuple[PriorMessage, ...] = ()

    @model_validator(mode="after")
    def _references(self) -> World:
        ids = [p.id for p in self.parties]
        if len(set(ids)) != len(ids):
            raise ValueError("party ids must be unique")
        for wo in self.work_orders:
            for who in (wo.tenant, wo.vendor):
                if who is not None and who not in ids:
                    raise ValueError(f"{wo.id}: no party {who!r} in the world")
        return self

    def party(self, id_or_phone: str) -> PartySpec | None:
        return next((p for p in self.parties if id_or_phone in (p.id, p.phone)), None)

    def directory(self) -> Directory:
        """The world as a directory, the one form the importer applies (``seed_world``): each
        tenant in a unit (its label as given) of its property (:data:`WORLD_PROPERTY` unless
        it names one), each vendor of its ``trades`` (general when none) serving its
        properties (every one unless named), each PM managing theirs (the world's unless
        named)."""
        world = WORLD_PROPERTY.property_id

        def home(party: PartySpec) -> str:
            if len(party.properties) > 1:
                raise ValueError(f"tenant {party.id} names {len(party.properties)} properties")
            return party.properties[0] if party.properties else world

        tenants = [p for p in self.parties if p.role == "tenant" and p.unit]
        units = {
            (home(p), p.unit): _NOT_IN_ID.sub("-", f"{home(p)}-{p.unit}").strip("-")
            for p in sorted(tenants, key=lambda p: (home(p), p.unit or ""))
        }
        people: list[Person] = []
        vendors: list[Vendor] = []
        for party in self.parties:
            if party.role == "vendor":
                vendors.append(
                    Vendor(
                        vendor_id=party.id,
                        name=party.name or party.id,
                        phone=party.phone,
                        trades=party.trades or (Trade.GENERAL,),
                        property_ids=party.properties or (ALL_PROPERTIES,),
                        rank=party.rank,
                        after_hours=party.after_hours,
                    )
                )
                continue
            tenant = party.role == "tenant"
            people.append(
                Person(
                    person_id=party.id,
                    role=PersonRole.TENANT if tenant else PersonRole.PM,
                    name=party.name,
                    phones=(party.phone,),
                    unit_id=units[(home(party), party.unit)] if tenant and party.unit else None,
                    property_ids=() if tenant else (party.properties or (world,)),
                )
            )
        named = {prop for p in self.parties for prop in p.properties} | {prop for prop, _ in units}
        if any(p.role == "pm" and not p.properties for p in self.parties):
            named.add(world)
        return Directory(
            properties=tuple(
                WORLD_PROPERTY if prop == world else Property(property_id=prop, name=prop)
                for prop in sorted(named)
            ),
            units=tuple(
                Unit(unit_id=unit_id, property_id=prop, label=label or unit_id)
                for (prop, label), unit_id in units.items()
            ),
            people=tuple(people),
            vendors=tuple(vendors),
        )

    def domain_parties(self) -> list[Party]:
        """The phone → party rows the world's directory projects."""
        return list(self.directory().parties())

    def domain_states(self, now: datetime) -> list[MaestroState]:
        """The questions the seeded work orders have out (the WO-keyed routing snapshot)."""
        by_id = {wo.wo_id: wo for wo in self.domain_work_orders(now)}
        return [
            MaestroState(
                wo_id=spec.id,
                outstanding=(
                    OutstandingItem(
                        kind="availability",
                        since=now + offset(spec.asked_at),
                        note="when can the vendor come in?",
                        asked_about=WoSnapshot.of(by_id[spec.id]),
                    ),
                ),
                updated_at=now + offset(spec.asked_at),
            )
            for spec in self.work_orders
            if spec.awaiting == "availability"
        ]

    def domain_work_orders(self, now: datetime) -> list[WorkOrder]:
        """The seeded work orders, their times as offsets from ``now`` (the scenario's start)."""
        units = {p.id: p.unit for p in self.parties}
        # A WO is at its tenant's property, as the directory places them.
        homes = {
            p.party_id: p.property_ids[0]
            for p in self.directory().parties()
            if p.role is PartyRole.TENANT and len(p.property_ids) == 1
        }
        return [
            WorkOrder(
                wo_id=wo.id,
                tenant_id=wo.tenant,
                vendor_id=wo.vendor,
                unit=wo.unit or units.get(wo.tenant),
                property_id=wo.property or homes.get(wo.tenant),
                summary=wo.description,
                category=wo.category,
                status=WorkOrderStatus(wo.status),
                rating_requested=wo.rating_requested,
                created_at=now + offset(wo.opened_at),
                updated_at=now + offset(wo.updated_at),
            )
            for wo in self.work_orders
        ]


class TurnStep(_Spec):
    """A text (or a call's transcript) sent through the real signed webhook."""

    at: str = Field(default="+1m", description="'+5m' after the step before, or '72h' from start")
    from_: str = Field(alias="from", description="A party id or a raw phone (an unknown number)")
    channel: Literal["sms", "call", "app"] = "sms"
    text: str = Field(min_length=1)

    @field_validator("at")
    @classmethod
    def _an_offset(cls, value: str) -> str:
        offset(value)
        return value


class FlushStep(_Spec):
    """Let a package go: ``idle`` and ``max_wait`` let virtual time pass (the idle window, the
    longest wait); ``kickoff`` and ``conversation_ended`` are the assistant's signed request."""

    flush: Literal["idle", "kickoff", "conversation_ended", "max_wait"]
    from_: str | None = Field(
        default=None, alias="from", description="Whose conversation (default: the last sender)"
    )


class UpdateStep(_Spec):
    """A change made outside the conversation (the vendor or the PM, in the property system):
    the work order moves to ``status`` in the WO store, through the statuses allowed between."""

    at: str = Field(default="+1m", description="'+5m' after the step before, or '72h' from start")
    update: str = Field(description="The work order's id")
    status: Literal["scheduled", "in_progress", "completed", "cancelled"]
    by: str = Field(default="the vendor", description="Who changed it (for the record)")

    @field_validator("at")
    @classmethod
    def _an_offset(cls, value: str) -> str:
        offset(value)
        return value


class WaitStep(_Spec):
    """Nothing is sent: virtual time passes (``"4h"``), and whatever falls due on the way runs:
    an offer's or a question's deadline, the idle window, the digest, the sweeps."""

    wait: str = Field(description="How long: '30m', '4h', '2d'")

    @field_validator("wait")
    @classmethod
    def _a_duration(cls, value: str) -> str:
        if offset(value).total_seconds() <= 0 or value.strip().startswith(("+", "-")):
            raise ValueError(f"a wait is a positive duration such as '4h', not {value!r}")
        return value


Step = TurnStep | FlushStep | UpdateStep | WaitStep


class ModelRule(_Spec):
    """Answer any call of ``purpose`` whose prompt contains ``when`` (in its new messages, for a
    reasoning call) with ``answer``."""

    purpose: Literal["probe", "precheck", "reasoning", "decide", "manage", "compose"]
    when: str = Field(default="", description="Text the call's new messages contain; '' = any")
    answer: dict[str, Any] | None = None
    fail: Literal["timeout", "overloaded", "rate_limited", "transport_error"] | None = None

    @model_validator(mode="after")
    def _answer_or_failure(self) -> ModelRule:
        if (self.answer is None) == (self.fail is None):
            raise ValueError("a rule gives an answer or a failure, not both or neither")
        return self


class ModelScript(_Spec):
    """Scripted model answers: rules first (by text), then per purpose in call order."""

    rules: tuple[ModelRule, ...] = ()
    calls: dict[str, tuple[dict[str, Any], ...]] = Field(default_factory=dict)


class DecisionExpect(_Spec):
    """Fields some decision of the covered packages must have (all given fields at once)."""

    stage: str | None = None
    lane: str | None = None
    disposition: str | None = None
    route: Literal["escalate", "reasoning", "handback"] | None = None
    abstained: bool | None = None
    interrupted: bool | None = None
    resume_revalidated: bool | None = None
    revalidation: Literal["valid", "stale", "superseded"] | None = None
    fallback: bool | None = None
    context_relation: str | None = None
    open_context_count: int | None = None
    target_wo_id: str | None = None


class WorkOrderExpect(_Spec):
    """One work order as the WO store has it (and its dispatch run, read from the dispatch
    store). Keyed by id, or ``new:N`` for the Nth work order the scenario's packages created."""

    status: str | None = None
    vendor: str | None = Field(default=None, description="The vendor's party id")
    dispatch: str | None = Field(
        default=None, description="Its dispatch run's step: assigned, no_vendor, closed, ..."
    )
    offers: tuple[str, ...] | None = Field(
        default=None,
        description="Each offer as 'vendor-id:outcome' in order (accepted, declined, "
        "timed_out, withdrawn, open)",
    )

    @field_validator("offers")
    @classmethod
    def _vendor_and_outcome(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        outcomes = ("open", "accepted", "declined", "timed_out", "withdrawn")
        for offer in value or ():
            if offer.rpartition(":")[2] not in outcomes:
                raise ValueError(f"an offer is 'vendor-id:outcome' ({'|'.join(outcomes)})")
        return value

    rating: int | None = None
    rating_requested: bool | None = None
    unchanged: bool | None = Field(default=None, description="Still at its seeded version")


class MessageExpect(_Spec):
    to: str = Field(description="A party id, 'pm' (the on-call PM) or a phone")
    contains: str = ""
    count: int | None = Field(default=None, ge=0, description="Exactly this many (default ≥ 1)")


class Expect(_Spec):
    lanes: tuple[str, ...] | None = Field(default=None, description="Queued lanes, in order")
    actions: tuple[dict[str, Any], ...] | None = Field(
        default=None, description="Queued actions in order: {lane, target}"
    )
    absent_lanes: tuple[str, ...] = ()
    decisions: tuple[DecisionExpect, ...] = ()
    no_decision: tuple[DecisionExpect, ...] = Field(
        default=(), description="No decision of the covered packages may match any of these"
    )
    work_orders: dict[str, WorkOrderExpect] = Field(
        default_factory=dict,
        description="By WO id, or 'new:N' for the Nth work order the scenario's packages created",
    )
    new_work_orders: int | None = Field(default=None, ge=0)
    messages: tuple[MessageExpect, ...] = ()
    no_message_containing: tuple[str, ...] = ()
    packages: int | None = Field(default=None, ge=0, description="Packages produced")
    failed_open: bool | None = None
    evidence: bool | None = Field(default=None, description="Evidence rows exist for them")
    shame_empty: bool | None = None


class Checkpoint(_Spec):
    after: int = Field(ge=0, description="The index of the turn it follows")
    id: str = Field(min_length=1)
    expect: Expect


class Scenario(_Spec):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    title: str
    description: str = ""
    naive_failure: str = Field(min_length=1, description="The behaviour it is written to catch")
    world: World
    turns: tuple[TurnStep | FlushStep | UpdateStep | WaitStep, ...] = Field(min_length=1)
    model: ModelScript | None = None
    checkpoints: tuple[Checkpoint, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        ids = [c.id for c in self.checkpoints]
        if len(set(ids)) != len(ids):
            raise ValueError("checkpoint ids must be unique")
        for checkpoint in self.checkpoints:
            if checkpoint.after >= len(self.turns):
                raise ValueError(f"{checkpoint.id}: after {checkpoint.after}: no such turn")
        afters = [c.after for c in self.checkpoints]
        if any(b <= a for a, b in itertools.pairwise(afters)):
            raise ValueError("checkpoints must be in turn order, one after any turn")
        for turn in self.turns:
            if (
                isinstance(turn, TurnStep)
                and self.world.party(turn.from_) is None
                and not re.fullmatch(r"^\+[1-9]\d{6,14}$", turn.from_)
            ):
                raise ValueError(f"turn from {turn.from_!r}: no such party, nor a phone")
            if isinstance(turn, UpdateStep) and turn.update not in {
                wo.id for wo in self.world.work_orders
            }:
                raise ValueError(f"update of {turn.update!r}: no such work order in the world")
        return self

    def checkpoint_after(self, index: int) -> Checkpoint | None:
        return next((c for c in self.checkpoints if c.after == index), None)
