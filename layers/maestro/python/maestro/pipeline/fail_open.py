"""The last line: a fallback decision, the PM paged with a short reason, every unfinished
action recorded, the lease released or the turn forfeited.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from maestro.domain.actions import Lane
from maestro.domain.common import truncate
from maestro.domain.dispose import Disposal
from maestro.domain.events import DomainEvent, Effect, body_digest, claim_dict, sent_claim
from maestro.domain.fixed_texts import (
    ALERTED,
    FAIL_OPEN_PAGE,
    FAIL_OPEN_UNKNOWN_SENDER,
    FAIL_OPEN_WHY,
    FAIL_OPEN_WHY_OTHER,
    PAGE_WHO,
    UNIT_SUFFIX,
    say,
)
from maestro.domain.language import in_language
from maestro.domain.models import Party
from maestro.domain.on_call import WHY_CHARS, PageRecipient, page_property
from maestro.domain.privacy import mask_text
from maestro.domain.records import (
    ActionOutcomeRecord,
    Disposition,
    MaestroDecision,
    OutcomeStatus,
    PackageCompletion,
    Route,
    completion_record_id,
    fallback_decision_id,
    outcome_record_id,
)
from maestro.lanes.escalate import (
    UNREACHED_TEXTS,
    advice_language,
    safety_advice_key,
    safety_instructions,
)
from maestro.lanes.on_call import page_recipient, undeliverable
from maestro.observability import count, logger
from maestro.pipeline.contract import ExecutionState, FailOpenResult, LeaseSnapshot, StepError, dump
from maestro.pipeline.shared import JSON, Pipeline, Step, tally
from maestro.ports.limits import CapName
from maestro.ports.messaging import NotTextableError, SendFailedError, SentMessage


def fail_open(pipeline: Pipeline, state: Mapping[str, Any]) -> JSON:
    """Record a fallback decision, close every unfinished action, page the on-call PM with a
    short reason, complete the record and release the lease (or forfeit the turn), and only
    then publish its events, using the execution's own ids: this is the last line, so it
    works even when the rest of the state is unreadable or the bus is down."""
    now = pipeline.deps.clock.now()
    raw = dict(state)
    package_id = str(raw.get("package_id") or "unknown")
    conversation_id = str(raw.get("conversation_id") or "unknown")
    flush_number = _int(raw.get("flush_number"))
    s = _lenient_state(raw)
    failure = s.failure if s and s.failure else StepError.model_validate(raw.get("failure") or {})
    why = short_failure_reason(failure)
    disposal = s.final_disposal if s else None
    lease = s.lease if s else None
    decision = MaestroDecision(
        decision_id=fallback_decision_id(package_id),
        package_id=package_id,
        conversation_id=conversation_id,
        stage="fallback",
        index=0,
        disposition=Disposition.QUEUED,
        lane=Lane.ESCALATE,
        open_context_count=len(lease.contexts) if lease else 0,
        fallback=True,
        confidence=0.0,
        reason=f"failed open: {why} [{_failure_detail(failure)}]",
        idempotency_key=f"{package_id}#failopen",
        recorded_at=now,
    )
    pipeline.append_decision(decision)
    if disposal is not None:
        _close_unfinished(pipeline, disposal, conversation_id, now)

    emergency = bool(s and s.precheck and s.precheck.route is Route.ESCALATE)
    sender_phone = s.package_ref.sender_phone if s else None
    events: list[DomainEvent] = []
    unsent: list[str] = []
    recipient = _fail_open_recipient(pipeline, lease.sender if lease else None, now)
    if emergency and sender_phone and not (s and s.escalated):
        # The early escalation did not finish: the tenant still gets the safety advice, and
        # once. It may have texted the advice before it failed, so the advice goes under the
        # escalation's own key (the messenger then returns that text, not a second one).
        evidence = s.precheck.evidence if s and s.precheck else ""
        language = advice_language(_preferred_language(pipeline, lease, sender_phone), evidence)
        _, advice = safety_instructions(evidence, language=language)
        key = _advice_key(pipeline, package_id)
        advised = _send_or_note(
            pipeline,
            sender_phone,
            f"{advice} " + in_language(ALERTED if recipient.phone else UNREACHED_TEXTS, language),
            key,
            unsent,
            "texts",
        )
        if advised is not None:
            events.append(_sent_event(key, advised, decision, now))
    who = _who(lease.sender if lease else None, sender_phone)
    severity = "EMERGENCY" if emergency else "FALLBACK"
    key = f"{package_id}#failopen"
    sent = None
    if recipient.phone is None:
        unsent.append(undeliverable(recipient, "the page", package_id=package_id))
    else:
        # A short reason and who, never their words (#11: the failure may carry
        # them); and no text to the sender: what the package did before it failed is not
        # known here, so nothing true could be said about it.
        sent = _send_or_note(
            pipeline,
            recipient.phone,
            say(FAIL_OPEN_PAGE, "en", severity=severity, who=who, why=why, package_id=package_id),
            key,
            unsent,
            "pages",
        )
    if sent is not None:
        events.append(_sent_event(key, sent, decision, now))
        events.append(
            DomainEvent(
                event_id=f"{key}#escalation.paged",
                type="escalation.paged",
                package_id=package_id,
                decision_id=decision.decision_id,
                subject_id=sent.sid,
                claim=claim_dict(
                    "escalation.paged",
                    {
                        "to_sha256": body_digest(sent.to),
                        "reason": "fallback",
                        "severity": severity.lower(),
                        "why": recipient.why,
                        "person_id": recipient.person_id,
                    },
                ),
                occurred_at=now,
            )
        )
    if unsent:
        # The texts could not go either (the provider is down): the completion line and the
        # SendFailures alarm (not an SMS) are how the PM learns of it.
        why = truncate(f"{why}; not sent: {'; '.join(unsent)}", 500)
    # The record is complete and the lease free before any event goes: a bus that stays
    # down through this step's retries costs the events (the sweeper finds each effect
    # without its event: missing_event), never the package's last line or its turn.
    completed = pipeline.deps.decisions.complete(
        PackageCompletion(
            record_id=completion_record_id(package_id),
            package_id=package_id,
            conversation_id=conversation_id,
            route=disposal.route.value if disposal else "unknown",
            completed_by="fail_open",
            decisions=(len(disposal.decisions) if disposal else 0) + 1,
            outcomes=tally(pipeline.deps.decisions.outcomes_for(package_id)),
            effects=tuple(Effect(event=e.type, subject_id=e.subject_id) for e in events),
            reason=why,
            recorded_at=now,
        )
    )
    released = forfeited = False
    if flush_number is not None and conversation_id != "unknown":
        released = pipeline.deps.buffer.release_lease(conversation_id, package_id, flush_number)
        if not released:
            # It never held the lease (or lost it): give up its turn too, or every later
            # package of the conversation would wait for it forever.
            pipeline.deps.buffer.forfeit_turn(conversation_id, flush_number)
            forfeited = True
    if completed:  # once per package, however often the step runs
        count("Fallbacks")
        logger.error(
            "package failed open",
            extra={"package_id": package_id, "error": failure.Error, "reason": why},
        )
    # Always emit: the watcher reads each of these messages back from the messenger's surface.
    pipeline.deps.bus.publish(events)
    return dump(
        FailOpenResult(
            decision_id=decision.decision_id,
            paged=sent.sid if sent is not None else None,
            unsent=tuple(unsent),
            released=released,
            forfeited=forfeited,
        )
    )


def _send_or_note(
    pipeline: Pipeline, to: str, body: str, key: str, unsent: list[str], cap: CapName
) -> SentMessage | None:
    """Fail-open's own texts: a failure to send is noted (and counted), never raised, so the
    package still completes its record and releases its lease. They count against the daily
    caps but a cap never holds them back: the PM must hear that a package failed, and an
    emergency's advice always goes."""
    if pipeline.deps.caps is not None:
        try:
            pipeline.deps.caps.charge(cap, key, pipeline.deps.clock.now(), force=True)
        except Exception as error:  # the last line never fails on its own bookkeeping
            logger.warning("fail-open could not count a send", extra={"error": str(error)})
    try:
        return pipeline.deps.messenger.send(to, body, idempotency_key=key)
    except NotTextableError as refused:  # no consent: a decision, not a failure
        unsent.append(truncate(f"to {to}: {refused.reason}", 200))
        return None
    except SendFailedError as failed:
        count("SendFailures")
        unsent.append(truncate(f"to {to}: {failed.reason}", 200))
        logger.error("fail-open could not send", extra={"to": to, "reason": failed.reason})
        return None


def _fail_open_recipient(pipeline: Pipeline, sender: Party | None, now: datetime) -> PageRecipient:
    """Fail-open's page goes where any page goes (docs/on-call.md), by the sender's one
    property. The last line never fails on the directory: unreadable, it pages the
    account's fallback number (or records the page as undeliverable), saying so."""
    about = page_property(None, sender)
    try:
        return page_recipient(
            pipeline.deps.directory, pipeline.deps.on_call_pm_phone, about, now, sender
        )
    except Exception as error:
        logger.warning("fail-open could not read the directory", extra={"error": str(error)})
        chosen = page_recipient(None, pipeline.deps.on_call_pm_phone, about, now, sender)
        return chosen.model_copy(
            update={"why": truncate(f"{chosen.why}; the directory could not be read", WHY_CHARS)}
        )


def _preferred_language(pipeline: Pipeline, lease: LeaseSnapshot | None, phone: str) -> str | None:
    """The sender's directory language: from the lease's snapshot, else the directory (the
    early escalation fails before any lease). None when unknown or unreadable: fail-open
    never fails on its own bookkeeping, and the words then choose."""
    if lease is not None and lease.sender is not None:
        return lease.sender.language
    try:
        party = pipeline.deps.parties.by_phone(phone)
    except Exception as error:
        logger.warning("fail-open could not read the sender", extra={"error": str(error)})
        return None
    return party.language if party is not None else None


def _advice_key(pipeline: Pipeline, package_id: str) -> str:
    """The early escalation's safety-advice key when it decided one (written ahead, before
    it texted), else fail-open's own."""
    for decided in pipeline.deps.decisions.for_package(package_id):
        if (
            decided.lane is Lane.ESCALATE
            and decided.disposition is Disposition.QUEUED
            and not decided.fallback
            and decided.idempotency_key
        ):
            return safety_advice_key(decided.idempotency_key)
    return f"{package_id}#failopen#safety"


def _close_unfinished(
    pipeline: Pipeline, disposal: Disposal, conversation_id: str, now: datetime
) -> None:
    """Every queued action without an outcome gets one: the first failed (it was running, or
    its effect is unknown), the rest were never run."""
    done = {o.index for o in pipeline.deps.decisions.outcomes_for(disposal.package_id)}
    first = True
    for queued in disposal.actions:
        if queued.index in done:
            continue
        status: OutcomeStatus = "failed" if first else "skipped"
        note = (
            "the package failed open while this action ran; its effect is unknown"
            if first
            else "not run: the package failed open before it"
        )
        first = False
        pipeline.deps.decisions.record_outcome(
            ActionOutcomeRecord(
                record_id=outcome_record_id(disposal.package_id, queued.index),
                package_id=disposal.package_id,
                conversation_id=conversation_id,
                index=queued.index,
                decision_id=queued.decision_id,
                lane=queued.lane,
                status=status,
                target_wo_id=queued.action.target_wo_id,
                note=note,
                recorded_at=now,
            )
        )


def _sent_event(
    key: str, sent: SentMessage, decision: MaestroDecision, now: datetime
) -> DomainEvent:
    """The ``message.sent`` claim of a message a step sent itself (not through a lane)."""
    return DomainEvent(
        event_id=f"{key}#message.sent",
        type="message.sent",
        package_id=decision.package_id,
        decision_id=decision.decision_id,
        subject_id=sent.sid,
        claim=sent_claim(sent.to, sent.body, sent.via),
        occurred_at=now,
    )


def _int(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        return None


def _lenient_state(raw: dict[str, Any]) -> ExecutionState | None:
    try:
        return ExecutionState.model_validate(raw)
    except ValidationError:
        return None


def short_failure_reason(failure: StepError) -> str:
    """What a PM reads: a short reason, never the raw exception or the tenant's words."""
    plain = FAIL_OPEN_WHY.get(failure.Error)
    if plain is not None:
        return say(plain, "en")
    return say(FAIL_OPEN_WHY_OTHER, "en", error=truncate(mask_text(failure.Error), 60))


def _failure_detail(failure: StepError) -> str:
    """For the decision log: the error name and the first line of its message, without the
    input values pydantic quotes (they may hold the tenant's words) or phone numbers."""
    message = failure.Cause
    try:
        cause = json.loads(failure.Cause)
        if isinstance(cause, dict):
            message = str(cause.get("errorMessage", ""))
    except ValueError:
        pass
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = first.split("input_value=")[0].strip()
    return truncate(mask_text(f"{failure.Error}: {first}" if first else failure.Error), 300)


def _who(sender: Party | None, phone: str | None) -> str:
    if sender is not None:
        unit = say(UNIT_SUFFIX, "en", unit=truncate(sender.unit, 20)) if sender.unit else ""
        name = truncate(sender.name or sender.party_id, 40)
        return say(PAGE_WHO, "en", name=name, role=sender.role.value, unit=unit)
    return phone or say(FAIL_OPEN_UNKNOWN_SENDER, "en")


STEP = Step(fail_open, None)
"""The fail_open step; its input the raw state: it reads what it can, even an unreadable one."""
