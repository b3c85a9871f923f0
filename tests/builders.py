"""Small builders for test data, shared by the unit and property tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from maestro.domain.actions import Action, parse_action
from maestro.domain.consensus import ConsensusPolicy, ConsensusResult, aggregate
from maestro.domain.models import (
    Attestation,
    Channel,
    ContextKind,
    FlushTrigger,
    Message,
    OpenContext,
    Package,
    Urgency,
    WorkOrder,
)
from maestro.domain.records import BrainSample, SampleFailure
from maestro_dev.local.world import MARIA

T0 = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)
TENANT_PHONE = MARIA.phone


def package(
    *bodies: str,
    at: datetime = T0,
    phone: str = TENANT_PHONE,
    flush: int = 1,
    channel: Channel = Channel.SMS,
    attestation: Attestation | None = None,
) -> Package:
    """A package of ``bodies``, each a message on ``channel`` (a call's: with ``attestation``)."""
    messages = tuple(
        Message(
            message_id=f"SM{flush:03d}{i:04d}",
            conversation_id="conv-1",
            channel=channel,
            from_phone=phone,
            body=body,
            received_at=at - timedelta(seconds=len(bodies) - i),
            seq=flush * 100 + i,
            attestation=attestation,
        )
        for i, body in enumerate(bodies)
    )
    return Package(
        package_id=f"pkg-conv-1-{flush}",
        conversation_id="conv-1",
        flush_number=flush,
        trigger=FlushTrigger.IDLE_TIMEOUT,
        sender_phone=phone,
        messages=messages,
        flushed_at=at,
    )


def wo_context(
    wo_id: str,
    description: str = "leak under the kitchen sink, unit 3B",
    *,
    age: timedelta = timedelta(hours=2),
    awaiting: str = "nothing",
    rating_requested: bool = False,
    now: datetime = T0,
) -> OpenContext:
    return OpenContext(
        context_id=wo_id,
        kind=ContextKind.WORK_ORDER,
        description=description,
        opened_at=now - age - timedelta(days=1),
        last_activity_at=now - age,
        awaiting="rating" if rating_requested else awaiting,
        rating_requested=rating_requested,
        wo_id=wo_id,
    )


def work_order(
    wo_id: str = "WO-5c21",
    summary: str = "bathroom fan rattles",
    *,
    category: str = "general",
    urgency: Urgency = Urgency.ROUTINE,
    unit: str | None = "7A",
    property_id: str | None = "larch",
    **extra: Any,
) -> WorkOrder:
    """An open work order as create_wo stores it (its fields overridable)."""
    return WorkOrder(
        wo_id=wo_id,
        tenant_id=extra.pop("tenant_id", "tenant-ines"),
        unit=unit,
        property_id=property_id,
        summary=summary,
        category=category,
        urgency=urgency,
        created_at=extra.pop("created_at", T0),
        updated_at=extra.pop("updated_at", T0),
        **extra,
    )


def act(lane: str, target: str | None = None, confidence: float = 0.9, **params: Any) -> Action:
    """An action of ``lane`` with sensible default params, overridable by keyword."""
    defaults: dict[str, dict[str, Any]] = {
        "create_wo": {"summary": "new maintenance request"},
        "relay_to_open_wo": {"note": "more detail from the tenant"},
        "schedule_visit": {"availability": "tomorrow after 2pm"},
        "record_rating": {"stars": 5},
        "relay_to_vendor": {"message": "the tenant says hi"},
        "manage_existing": {"operation": "list"},
        "continue_with_assistant": {},
        "clarify": {"question": "which one?"},
        "escalate": {"reason": "emergency", "hazard": "gas smell"},
    }
    return parse_action(
        {
            "lane": lane,
            "target_wo_id": target,
            "confidence": confidence,
            "why": "test",
            "params": {**defaults[lane], **params},
        }
    )


def sample(index: int, *actions: Action, model: str = "scripted") -> BrainSample:
    return BrainSample(index=index, actions=tuple(actions), model=model)


def failed(index: int, failure: SampleFailure = "transport_error") -> BrainSample:
    return BrainSample(index=index, failure=failure, model="scripted")


def samples_of(*plans: Sequence[Action] | SampleFailure) -> list[BrainSample]:
    """One sample per plan; a plan given as a failure kind is a failed sample."""
    out: list[BrainSample] = []
    for i, plan in enumerate(plans):
        out.append(failed(i, plan) if isinstance(plan, str) else sample(i, *plan))
    return out


def consensus(*plans: Sequence[Action] | SampleFailure, k: int = 5) -> ConsensusResult:
    return aggregate(samples_of(*plans), ConsensusPolicy(k=k))
