"""What every lane gets and gives back.

A lane is the effect of one disposed action. It runs once per (package id, action index): the
act handler wraps it in Powertools idempotency, and the lane itself is written so a re-run is
harmless anyway (deterministic ids, conditional creates, a messenger keyed by the same key).
Every effect returns the domain events it claims, for the bus.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from maestro.brain.compose import ReplyComposer
from maestro.brain.manage_agent import ManageAgent
from maestro.domain.actions import NEW_WO_PREFIX, Action
from maestro.domain.common import Frozen
from maestro.domain.dispose import QueuedAction
from maestro.domain.events import DomainEvent, Effect, EventType, body_digest, claim_dict
from maestro.domain.language import language_for
from maestro.domain.models import OpenContext, Package, Party, WorkOrder
from maestro.domain.timeline import (
    TIMELINE_ENTRY,
    EntryKind,
    TimelineEntry,
    entry_id_for,
)
from maestro.ports.limits import CapName, DailyCaps, PageThrottle
from maestro.ports.messaging import Digest, Messenger, NotTextableError, SentMessage
from maestro.ports.stores import (
    DecisionLog,
    DirectoryReader,
    DispatchStore,
    PartyDirectory,
    PendingStore,
    Timeline,
    WorkOrderStore,
)
from maestro.ports.workflows import TaskTokens


def wo_id_for(package_id: str, ref: str) -> str:
    """The id a ``create_wo`` gives its work order: deterministic, so a re-run cannot create a
    second one, and a later action in the same package can name it by its ``new:`` ref."""
    digest = hashlib.sha256(f"{package_id}#{ref}".encode()).hexdigest()[:8].upper()
    return f"WO-{digest}"


@dataclass
class LaneContext:
    """Everything a lane may touch, passed in (fakes in unit tests, DynamoDB in the stack)."""

    package: Package
    sender: Party | None
    open_contexts: tuple[OpenContext, ...]
    action_index: int
    idempotency_key: str
    work_orders: WorkOrderStore
    pending: PendingStore
    parties: PartyDirectory
    messenger: Messenger
    on_call_pm_phone: str
    """The account's fallback number for pages ("" when none): after the directory's on-call
    and default PMs (docs/on-call.md)."""
    now: datetime
    timeline: Timeline
    throttle: PageThrottle | None = None
    queued: QueuedAction | None = None
    agent: ManageAgent | None = None
    caps: DailyCaps | None = None
    digest: Digest | None = None
    fold_seconds: int = 1800
    directory: DirectoryReader | None = None
    dispatch: DispatchStore | None = None
    """Each WO's dispatch run (its open wait): None where no WO execution runs."""
    tokens: TaskTokens | None = None
    """Completes a WO execution's wait (SendTaskSuccess)."""
    composer: ReplyComposer | None = None
    """Writes the assistant's reply with the cheap model (None: offline, or turned off)."""
    decisions: DecisionLog | None = None
    """What this package's earlier actions did (their recorded outcomes), for that reply."""
    events: list[DomainEvent] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    sent: list[SentMessage] = field(default_factory=list)
    unsent: list[str] = field(default_factory=list)
    folded_into: tuple[str, datetime] | None = None
    _allowed: dict[str, bool] = field(default_factory=dict, init=False, repr=False)

    @property
    def sender_language(self) -> str:
        """The language the sender reads: the directory's, else their message's, else English."""
        preferred = self.sender.language if self.sender is not None else None
        return language_for(preferred, self.package.text)

    def language_of(self, phone: str, wo: WorkOrder | None = None) -> str:
        """The language whoever has ``phone`` reads: the sender's as above; anyone else's from
        the directory; for the tenant of ``wo`` whom the directory gives none, the language
        they wrote in when it was opened (``WorkOrder.language``); else English (their words
        are not in this package)."""
        if phone == self.package.sender_phone or (
            self.sender is not None and phone == self.sender.phone
        ):
            return self.sender_language
        party = self.parties.by_phone(phone)
        preferred = party.language if party is not None else None
        if not preferred and wo is not None and party is not None:
            preferred = wo.language if party.party_id == wo.tenant_id else None
        return language_for(preferred)

    def resolve_target(self, target: str | None) -> str | None:
        """A ``new:<ref>`` target names the WO an earlier create in this package made."""
        if target is not None and target.startswith(NEW_WO_PREFIX):
            return wo_id_for(self.package.package_id, target)
        return target

    @property
    def decision_id(self) -> str | None:
        """The decision whose action this is (dispose wrote it ahead of the act)."""
        return self.queued.decision_id if self.queued is not None else None

    @property
    def target_wo_id(self) -> str | None:
        """The WO the action names, resolved (a ``new:`` ref to the WO this package made)."""
        if self.queued is None or self.queued.held:
            return None  # a hold of actions has no one target: it names each
        return self.resolve_target(self.queued.action.target_wo_id)

    def event(
        self,
        type_: EventType,
        subject_id: str,
        suffix: str = "",
        *,
        wo_id: str | None = None,
        **claim: str | int | bool | None,
    ) -> DomainEvent:
        """Record a domain event: the claim, checked against its type's schema
        (:mod:`maestro.domain.events`); its id is deterministic (key + type + suffix)."""
        event = DomainEvent(
            event_id=f"{self.idempotency_key}#{type_}{('#' + suffix) if suffix else ''}",
            type=type_,
            package_id=self.package.package_id,
            decision_id=self.decision_id,
            action_index=self.action_index,
            subject_id=subject_id,
            wo_id=wo_id or self.target_wo_id,
            claim=claim_dict(type_, claim),
            occurred_at=self.now,
        )
        self.events.append(event)
        return event

    def effect(self, event: EventType, subject_id: str) -> None:
        """Record what this action wrote (by the code that wrote it), apart from the event
        that claims it: the sweeper expects an event for every effect."""
        made = Effect(event=event, subject_id=subject_id)
        if made not in self.effects:
            self.effects.append(made)

    def append_entry(
        self, kind: EntryKind, wo_id: str, what: str, suffix: str = "", **fields: Any
    ) -> TimelineEntry:
        """Append a typed entry to the WO's timeline (who, when, which package and decision),
        create-once by its deterministic id; returns the entry as stored (a re-run's is the
        first run's). The write is an effect: a ``wo.updated`` (or ``rating.recorded``) event
        must claim it."""
        sender = self.sender
        entry = TIMELINE_ENTRY.validate_python(
            {
                "kind": kind,
                "wo_id": wo_id,
                "entry_id": entry_id_for(self.idempotency_key, kind, suffix),
                "at": self.now,
                "who": sender.party_id if sender is not None else None,
                "who_role": sender.role if sender is not None else None,
                "package_id": self.package.package_id,
                "decision_id": self.decision_id,
                "what": what[:500],
                **fields,
            }
        )
        if not self.timeline.append(entry):
            stored = self.timeline.get(wo_id, entry.entry_id)
            if stored is not None:
                entry = stored
        self.effect("rating.recorded" if kind == "rating" else "wo.updated", wo_id)
        return entry

    def send_key(self, suffix: str = "") -> str:
        """The messenger's idempotency key for this action's message ``suffix``."""
        return f"{self.idempotency_key}#{suffix}" if suffix else self.idempotency_key

    def may_send(self, cap: CapName, suffix: str = "", *, essential: bool = False) -> bool:
        """Charge the message ``suffix`` to today's account-wide ``cap`` (once per message: a
        re-run is not charged twice). False when the cap is reached and it may not go; an
        ``essential`` message (an emergency page, safety advice) is counted and always goes."""
        key = self.send_key(suffix)
        if key not in self._allowed:
            self._allowed[key] = self.caps is None or self.caps.charge(
                cap, key, self.now, force=essential
            )
        return self._allowed[key]

    def send(
        self,
        to: str,
        body: str,
        suffix: str = "",
        *,
        wo_id: str | None = None,
        cap: CapName = "texts",
        essential: bool = False,
    ) -> SentMessage | None:
        """Send a message: the effect, then its ``message.sent`` event. None when a daily cap
        refused it, or the recipient may not be texted (opted out, no SMS consent): it is
        recorded as not sent (``unsent``, on the outcome) and claimed by no event. A page that
        cannot reach its PM is not skipped: it fails the step (fail-open tells what it can)."""
        if not self.may_send(cap, suffix, essential=essential):
            self.unsent.append(
                f"{suffix or 'message'} to {to}: not sent, the daily {cap} cap is reached"
            )
            return None
        key = self.send_key(suffix)
        try:
            sent = self.messenger.send(to, body, idempotency_key=key)
        except NotTextableError as refused:
            if cap == "pages":
                raise
            self.unsent.append(f"{suffix or 'message'} to {to}: not sent, {refused.reason}")
            return None
        if sent not in self.sent:
            self.sent.append(sent)
        self.effect("message.sent", sent.sid)
        self.event(
            "message.sent",
            sent.sid,
            suffix or "msg",
            wo_id=wo_id,
            to_sha256=body_digest(sent.to),
            body_sha256=body_digest(sent.body),
            via=sent.via,
        )
        return sent


class LaneOutcome(Frozen):
    """What an executed action did, as the lane claims it (the watcher checks the claims)."""

    idempotency_key: str
    lane: str
    status: Literal["done", "skipped"] = "done"
    target_wo_id: str | None = None
    created_wo_id: str | None = None
    message_sids: tuple[str, ...] = ()
    events: tuple[DomainEvent, ...] = ()
    effects: tuple[Effect, ...] = Field(
        default=(), description="What the action wrote, each of which an event must claim"
    )
    note: str = Field(default="", max_length=500)
    unsent: tuple[str, ...] = Field(
        default=(),
        description="Messages a daily cap or the recipient's consent kept from going: recorded, "
        "never claimed",
    )
    folded_into: str | None = Field(
        default=None, description="The SID of the emergency page this repeat folded into"
    )
    folded_at: datetime | None = Field(default=None, description="When that page went")


__all__ = ["Action", "LaneContext", "LaneOutcome", "wo_id_for"]
