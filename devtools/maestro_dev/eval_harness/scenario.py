"""The scenario format: a world, the turns people send, an optional script for the model, and
checkpoints graded from real reads.

A scenario is YAML (``evals/scenarios/*.yaml``; JSON Schema ``evals/scenario.schema.json``,
generated from these models). Times are offsets: ``"72h"`` or ``"-3d"`` from the scenario's
start, ``"+5m"`` after the step before. The embedded stack's clock is virtual, so a three-day
gap costs nothing.

- ``world``: the parties (id, role, phone, name, unit), the work orders (id, tenant, vendor,
  status, description, rating_requested, opened_at), optional prior messages, which are
  played through the real inbound path before the first turn (so the decisions they lead to
  are real ones), PMs' on-call shifts, and questions, holds and decisions already out or
  recorded at the start;
- ``turns``: in order, ``{at, from, channel, text, sid, media}`` (``from`` is a party id or a
  raw phone; one ``sid`` label twice is a redelivered webhook), ``{flush: idle | kickoff |
  conversation_ended | max_wait}``, ``{update: WO id, status, vendor, visit, category, summary,
  note}`` (a vendor's or PM's change made outside the conversation), ``{opt_out: who, via}``
  and ``{wait: 4h}``;
- ``model``: optional scripted answers for offline, deterministic runs of the model path: rules
  that answer whatever call mentions a text, seeded distributions, per purpose in call order,
  and the purposes left offline (the no-model path) while the rest are scripted;
- ``checkpoints``: ``{after: <turn index>, id, expect, known_failure}`` (several may follow one
  step); ``expect`` is graded on the packages the turns since the previous checkpoint produced,
  from the decision log, the executions' inputs and the conversation buffer, the WO store and
  the WOs' timelines and routing state, the pending, dispatch and consent stores, the messages
  as the messaging surface returns them, and the ledger's evidence and shame.

Every part is listed in ``docs/scenario-format.md``.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, field_validator, model_validator

from maestro.domain.common import Frozen
from maestro.domain.directory import (
    ALL_PROPERTIES,
    Directory,
    OnCall,
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
    "Choice",
    "DecisionExpect",
    "Expect",
    "FlushStep",
    "MediaSpec",
    "MessageExpect",
    "ModelDistribution",
    "ModelRule",
    "ModelScript",
    "NoMessageExpect",
    "OnCallSpec",
    "OptOutStep",
    "PackageExpect",
    "PartySpec",
    "PendingExpect",
    "PendingSpec",
    "PriorDecisionSpec",
    "PriorMessage",
    "Scenario",
    "Step",
    "TurnStep",
    "UpdateStep",
    "VisitSpec",
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


def _an_offset(value: str) -> str:
    offset(value)
    return value


Offset = Annotated[str, AfterValidator(_an_offset)]
"""A time offset as written in a scenario ('-3h', '+5m', '72h'), checked when loaded."""


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
    asked_at: Offset = Field(default="-20m", description="When that question was asked")
    opened_at: Offset = Field(default="-3h", description="An offset from the scenario's start")
    updated_at: Offset = Field(default="-1h")


class MediaSpec(_Spec):
    """One file of an MMS, as Twilio posts it (``MediaUrl{N}``, ``MediaContentType{N}``)."""

    url: str = Field(pattern=r"^https://", description="Where the file is (https)")
    content_type: str = Field(default="image/jpeg", pattern=r"^[a-z]+/[A-Za-z0-9.+-]+$")


class OnCallSpec(_Spec):
    """A PM's on-call shift (the directory's rotation): ``pm`` covers ``property`` (``*``: all)
    from ``start`` until ``end``, offsets from the scenario's start."""

    pm: str = Field(description="The PM's party id")
    property: str = Field(default="*", description="A property id, or '*' for every one")
    start: Offset = Field(default="-1d")
    end: Offset = Field(default="7d")


class PendingSpec(_Spec):
    """An item already out when the scenario starts, as the pipeline would have stored it:
    ``question`` (a clarification to ``party``: which of ``candidates`` they mean) or ``hold``
    (a confirmation held for ``party``: ``proposal``, the cancel of ``wo`` on their YES)."""

    kind: Literal["question", "hold"]
    id: str = Field(min_length=1, description="The item's id (its row key)")
    party: str = Field(description="Whom it was asked (a party id)")
    text: str = Field(min_length=1, description="The question, or the proposal, as sent")
    candidates: tuple[str, ...] = Field(default=(), description="A question's WO ids")
    wo: str | None = Field(default=None, description="A hold's WO id (its cancel is held)")
    asked_at: Offset = Field(default="-10m")
    expires_in: Offset = Field(default="24h", description="How long after asked_at it expires")

    @model_validator(mode="after")
    def _complete(self) -> PendingSpec:
        if self.kind == "question" and len(self.candidates) < 2:
            raise ValueError(f"{self.id}: a question names two or more candidate WOs")
        if self.kind == "hold" and self.wo is None:
            raise ValueError(f"{self.id}: a hold names the WO whose cancel it holds")
        return self


class PriorDecisionSpec(_Spec):
    """A decision already in the decision log (a package before the scenario): what routing
    history and the console read, as the pipeline records it."""

    package: str = Field(min_length=1, description="The earlier package's id")
    party: str = Field(description="Whose conversation (a party id)")
    lane: Literal[
        "create_wo",
        "relay_to_open_wo",
        "schedule_visit",
        "record_rating",
        "relay_to_vendor",
        "manage_existing",
        "continue_with_assistant",
        "clarify",
        "escalate",
        "answer_wait",
    ]
    target: str | None = Field(default=None, description="The WO it targeted")
    candidates: tuple[str, ...] = Field(
        default=(),
        description="A clarify's candidate WOs: the question it put (the guard trail's "
        "'ask:<ids>' signal)",
    )
    disposition: Literal["queued", "rejected", "preempted", "below_threshold", "closed", "held"] = (
        "queued"
    )
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    reason: str = ""
    at: Offset = Field(default="-1h")


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
    fallback_phone: str | None = Field(
        default=None,
        pattern=r"^(\+[1-9]\d{6,14})?$",
        description="The account's fallback number (on_call_pm_phone), paged when no PM is on "
        "call or manages the property; '' for none (a page is then undeliverable); unset: the "
        "embedded stack's",
    )
    on_call: tuple[OnCallSpec, ...] = Field(
        default=(),
        description="PMs' on-call shifts; 'pm' in a message check is whom a page for the "
        "world's property goes to at the start (docs/on-call.md's order)",
    )
    pending: tuple[PendingSpec, ...] = Field(
        default=(), description="Questions and holds already out at the start"
    )
    decisions: tuple[PriorDecisionSpec, ...] = Field(
        default=(), description="Decisions already in the decision log at the start"
    )

    @model_validator(mode="after")
    def _references(self) -> World:
        ids = [p.id for p in self.parties]
        if len(set(ids)) != len(ids):
            raise ValueError("party ids must be unique")
        for wo in self.work_orders:
            for who in (wo.tenant, wo.vendor):
                if who is not None and who not in ids:
                    raise ValueError(f"{wo.id}: no party {who!r} in the world")
        roles = {p.id: p.role for p in self.parties}
        for shift in self.on_call:
            if roles.get(shift.pm) != "pm":
                raise ValueError(f"on call: {shift.pm!r} is not a PM of the world")
        wo_ids = {wo.id for wo in self.work_orders}
        for item in self.pending:
            if item.party not in ids:
                raise ValueError(f"pending {item.id}: no party {item.party!r} in the world")
            for wo_id in (*item.candidates, *([item.wo] if item.wo else [])):
                if wo_id not in wo_ids:
                    raise ValueError(f"pending {item.id}: no work order {wo_id!r} in the world")
        for decision in self.decisions:
            if decision.party not in ids:
                raise ValueError(f"decision {decision.package}: no party {decision.party!r}")
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
        named |= {s.property for s in self.on_call if s.property != ALL_PROPERTIES}
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
            on_call=tuple(
                OnCall(
                    property_id=shift.property,
                    person_id=shift.pm,
                    starts_at=self.start + offset(shift.start),
                    ends_at=self.start + offset(shift.end),
                )
                for shift in self.on_call
            ),
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

    at: Offset = Field(
        default="+1m", description="'+5m' after the step before, or '72h' from start"
    )
    from_: str = Field(alias="from", description="A party id or a raw phone (an unknown number)")
    channel: Literal["sms", "call", "app"] = "sms"
    text: str = Field(default="", description="The words ('' only for a text carrying media)")
    sid: str | None = Field(
        default=None,
        description="A label for the provider's message id: two turns with the same label send "
        "the same id (Twilio redelivering a webhook); none: a fresh id",
    )
    media: tuple[MediaSpec, ...] = Field(
        default=(), max_length=10, description="The files an MMS carries (sms only)"
    )

    @model_validator(mode="after")
    def _words_or_files(self) -> TurnStep:
        if not self.text and not self.media:
            raise ValueError("a turn has text, media or both")
        if self.media and self.channel != "sms":
            raise ValueError("only an sms carries media")
        return self


class OptOutStep(_Spec):
    """Someone stops texts: ``keyword`` texts the word (STOP …) through the real webhook;
    ``carrier`` opts them out at the carrier, so Twilio fails every text to them with error
    21610 and its status callback says so."""

    at: Offset = Field(
        default="+1m", description="'+5m' after the step before, or '72h' from start"
    )
    opt_out: str = Field(description="A party id or a phone")
    via: Literal["keyword", "carrier"] = "keyword"
    word: str = Field(default="STOP", description="The keyword texted (via: keyword)")


class FlushStep(_Spec):
    """Let a package go: ``idle`` and ``max_wait`` let virtual time pass (the idle window, the
    longest wait); ``kickoff`` and ``conversation_ended`` are the assistant's signed request."""

    flush: Literal["idle", "kickoff", "conversation_ended", "max_wait"]
    from_: str | None = Field(
        default=None, alias="from", description="Whose conversation (default: the last sender)"
    )


class UpdateStep(_Spec):
    """A change made outside the conversation (the vendor or the PM, in the property system),
    as a versioned write to the WO store: the vendor assigned, a visit booked, the category or
    summary corrected, a note on its timeline, and the status, moved through the statuses the
    lifecycle allows between. At least one change."""

    at: Offset = Field(
        default="+1m", description="'+5m' after the step before, or '72h' from start"
    )
    update: str = Field(description="The work order's id")
    status: Literal["assigned", "scheduled", "in_progress", "completed", "cancelled"] | None = None
    vendor: str | None = Field(default=None, description="Assign this vendor (a party id)")
    visit: VisitSpec | None = Field(default=None, description="Book this visit window")
    category: str | None = None
    summary: str | None = None
    note: str | None = Field(default=None, description="A note on the WO's timeline")
    by: str = Field(
        default="the vendor", description="Who changed it: a party id, or words for the record"
    )

    @model_validator(mode="after")
    def _changes_something(self) -> UpdateStep:
        changes = (self.status, self.vendor, self.visit, self.category, self.summary, self.note)
        if all(c is None for c in changes):
            raise ValueError(f"update of {self.update}: change something")
        return self


class VisitSpec(_Spec):
    """A visit window, offsets from the scenario's start (``"20h"`` to ``"22h"``)."""

    start: str
    end: str

    @field_validator("start", "end")
    @classmethod
    def _an_offset(cls, value: str) -> str:
        if is_relative(value):
            raise ValueError("a visit is at offsets from the start ('20h'), not '+…'")
        offset(value)
        return value

    @model_validator(mode="after")
    def _ordered(self) -> VisitSpec:
        if offset(self.end) <= offset(self.start):
            raise ValueError("a visit ends after it starts")
        return self


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


Step = TurnStep | FlushStep | UpdateStep | WaitStep | OptOutStep


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


Purpose = Literal["probe", "precheck", "reasoning", "decide", "manage", "compose"]


class Choice(_Spec):
    """One answer of a distribution, drawn with probability ``p``."""

    p: float = Field(gt=0.0, le=1.0)
    answer: dict[str, Any]


class ModelDistribution(_Spec):
    """Answer each call of ``purpose`` (whose prompt contains ``when``) with one of ``choices``,
    drawn at random with their ``p`` (summing to 1), from a generator seeded with ``seed``: the
    n-th matching call always draws the same answer, so a run repeats. "Relay WO-1 with
    p = 0.6, create with 0.4" is two choices."""

    purpose: Purpose
    when: str = Field(default="", description="Text the call's new messages contain; '' = any")
    seed: int = 0
    choices: tuple[Choice, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _sums_to_one(self) -> ModelDistribution:
        total = sum(c.p for c in self.choices)
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"a distribution's p sum to 1, not {total:g}")
        return self


class ModelScript(_Spec):
    """Scripted model answers: rules first (by text), then distributions, then per purpose in
    call order. A purpose named in ``offline`` never reaches the model: it takes the path maestro
    takes with no model (the offline brain for reasoning, the safety floor for probe and
    precheck, decide()'s defaults, the manage lane's rules, the fixed texts for compose), while
    the other purposes are scripted."""

    rules: tuple[ModelRule, ...] = ()
    distributions: tuple[ModelDistribution, ...] = ()
    calls: dict[str, tuple[dict[str, Any], ...]] = Field(default_factory=dict)
    offline: tuple[Purpose, ...] = Field(
        default=(), description="Purposes answered offline, as with no model at all"
    )

    @model_validator(mode="after")
    def _offline_is_not_scripted(self) -> ModelScript:
        if {"probe", "precheck"} & set(self.offline) and not {"probe", "precheck"} <= set(
            self.offline
        ):
            raise ValueError("probe and precheck are one stage (triage): offline both or neither")
        scripted = {r.purpose for r in self.rules} | {d.purpose for d in self.distributions}
        both = sorted((scripted | set(self.calls)) & set(self.offline))
        if both:
            raise ValueError(f"scripted and offline at once: {', '.join(both)}")
        return self


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
    samples: int | None = Field(default=None, ge=0, description="Samples drawn")
    valid_samples: int | None = Field(default=None, ge=0, description="Samples that parsed")
    votes: dict[str, int] | None = Field(
        default=None, description="The vote exactly: each reading's key and its support"
    )
    vote_split: tuple[int, ...] | None = Field(
        default=None,
        description="The supports of the readings, largest first ([3, 2]: a 3-2 split), "
        "whatever their keys",
    )


class WorkOrderExpect(_Spec):
    """One work order as the WO store has it (and its dispatch run, read from the dispatch
    store). Keyed by id, or ``new:N`` for the Nth work order the scenario's packages created."""

    status: str | None = None
    vendor: str | None = Field(default=None, description="The vendor's party id ('none': none)")
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
    category: str | None = None
    summary: str | None = Field(
        default=None, description="Words its summary contains (whole words, any case)"
    )
    visit: VisitSpec | Literal["none"] | None = Field(
        default=None, description="Its booked visit window (offsets from the start), or 'none'"
    )
    notes: tuple[str, ...] | None = Field(
        default=None,
        description="Its timeline's notes, in order: each note contains its words "
        "(whole words); exactly this many notes",
    )
    interrupted: bool | None = Field(
        default=None, description="Its routing state says an emergency interrupted it"
    )
    photos: int | None = Field(
        default=None, ge=0, description="Photos its timeline holds (each file once)"
    )


class MessageExpect(_Spec):
    """Messages sent to one recipient; ``contains`` matches whole words, any case ("WO-1" is
    not in "WO-198")."""

    to: str = Field(description="A party id, 'pm' (whom the world pages) or a phone")
    contains: str = ""
    count: int | None = Field(default=None, ge=0, description="Exactly this many (default ≥ 1)")


class NoMessageExpect(_Spec):
    """No message to ``to`` contains ``contains`` (whole words): a negative for one recipient,
    where ``no_message_containing`` is one for every recipient."""

    to: str = Field(description="A party id, 'pm' or a phone")
    contains: str = Field(min_length=1)


class PackageExpect(_Spec):
    """One package, read back from the conversation buffer (the messages its execution's input
    names) and the execution's input (its trigger): matched in order to the covered packages."""

    from_: str | None = Field(default=None, alias="from", description="Whose (a party id)")
    trigger: (
        Literal["kickoff", "conversation_ended", "idle_timeout", "urgency_expedite", "max_wait"]
        | None
    ) = None
    texts: tuple[str, ...] | None = Field(
        default=None,
        description="Its messages in order, each containing its words (whole words): exactly "
        "this many messages",
    )
    media: int | None = Field(default=None, ge=0, description="Files its messages carry")


class PendingExpect(_Spec):
    """An item out to a party: an open ``question`` (a clarification), a ``hold`` (a confirmation
    held for their YES), or an ``offer`` (a dispatch offer to a vendor, still open)."""

    to: str = Field(description="A party id")
    kind: Literal["question", "hold", "offer"]
    contains: str = Field(default="", description="Words of its text (whole words)")
    wo: str | None = Field(default=None, description="A WO id it is about ('new:N' too)")
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
    no_message_containing: tuple[str, ...] = Field(
        default=(), description="No message to anyone contains these words (whole words)"
    )
    no_messages: tuple[NoMessageExpect, ...] = Field(
        default=(), description="Per-recipient negatives"
    )
    packages: int | None = Field(default=None, ge=0, description="Packages produced")
    package_contents: tuple[PackageExpect, ...] | None = Field(
        default=None,
        description="The covered packages in start order, one entry each (exactly as many)",
    )
    pending: tuple[PendingExpect, ...] = Field(
        default=(), description="Items out to parties now (the pending and dispatch stores)"
    )
    opted_out: dict[str, bool] = Field(
        default_factory=dict, description="By party id: opted out of texts (the consent store)"
    )
    failed_open: bool | None = None
    evidence: bool | None = Field(default=None, description="Evidence rows exist for them")
    shame_empty: bool | None = None


class Checkpoint(_Spec):
    after: int = Field(ge=0, description="The index of the turn it follows")
    id: str = Field(min_length=1)
    expect: Expect
    known_failure: str | None = Field(
        default=None,
        min_length=1,
        description="A known product bug this checkpoint exposes (what, where): graded like any "
        "other and shown failing; the run passes while it fails and fails once it passes "
        "(the bug is fixed: remove the mark)",
    )


class Scenario(_Spec):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    title: str
    description: str = ""
    naive_failure: str = Field(min_length=1, description="The behaviour it is written to catch")
    world: World
    turns: tuple[TurnStep | FlushStep | UpdateStep | WaitStep | OptOutStep, ...] = Field(
        min_length=1
    )
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
        if any(b < a for a, b in itertools.pairwise(afters)):
            raise ValueError("checkpoints must be in turn order (several may follow one turn)")
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
            if isinstance(turn, UpdateStep) and turn.vendor is not None:
                vendor = self.world.party(turn.vendor)
                if vendor is None or vendor.role != "vendor":
                    raise ValueError(f"update of {turn.update}: {turn.vendor!r} is no vendor")
            if isinstance(turn, OptOutStep) and (
                self.world.party(turn.opt_out) is None
                and not re.fullmatch(r"^\+[1-9]\d{6,14}$", turn.opt_out)
            ):
                raise ValueError(f"opt-out of {turn.opt_out!r}: no such party, nor a phone")
        labels: dict[str, str] = {}
        for turn in self.turns:
            if isinstance(turn, TurnStep) and turn.sid is not None:
                first = labels.setdefault(turn.sid, f"{turn.from_}:{turn.channel}")
                if first != f"{turn.from_}:{turn.channel}":
                    raise ValueError(f"sid {turn.sid!r}: one provider id is one sender's message")
        return self

    def checkpoint_after(self, index: int) -> Checkpoint | None:
        """The first checkpoint after step ``index``."""
        return next((c for c in self.checkpoints if c.after == index), None)

    def checkpoints_after(self, index: int) -> tuple[Checkpoint, ...]:
        """Every checkpoint after step ``index``, in order: each graded on the same packages."""
        return tuple(c for c in self.checkpoints if c.after == index)
