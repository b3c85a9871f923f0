"""Stored data never breaks a step (issue #10, deliver 3).

Every model built from stored values must accept every value the store accepts: a WorkOrder's
summary, a party's name, a clarification's question and a message's body have no length limit in
the store, in any Unicode. The lease snapshot (open contexts), the brain input, the offline brain,
dispose and the lanes are built from them here with every field at (and past) its size and in
arbitrary text; none may raise. A derived line is cut where it is built, never validated after.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from builders import package
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maestro.brain.offline import OfflineBrain
from maestro.brain.stage_models import models_for
from maestro.domain.actions import (
    Clarify,
    ClarifyParams,
    Escalate,
    EscalateParams,
    ManageExisting,
    ManageExistingParams,
    RelayToOpenWo,
    RelayToOpenWoParams,
    ScheduleVisit,
    ScheduleVisitParams,
)
from maestro.domain.consensus import ConsensusPolicy, aggregate
from maestro.domain.dispose import dispose
from maestro.domain.memory import build_window
from maestro.domain.models import (
    OpenContext,
    Party,
    PartyRole,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.domain.records import (
    BrainSample,
    MaestroState,
    OutstandingItem,
    PendingClarification,
)
from maestro.lanes import execute
from maestro.lanes.context import LaneContext
from maestro.pipeline.shared import Pipeline, PipelineDeps
from maestro_dev.fakes import (
    FixedClock,
    InMemoryBus,
    InMemoryDailyCaps,
    InMemoryDecisionLog,
    InMemoryDigest,
    InMemoryGates,
    InMemoryLeases,
    InMemoryPageThrottle,
    InMemoryPartyDirectory,
    InMemoryPendingStore,
    InMemoryStateStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
)

NOW = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)
PM_PHONE = "+14155550199"

# Any text the store accepts: every Unicode category (surrogates aside: not valid UTF-8),
# empty or huge, with newlines, controls, combining marks and emoji joiners.
ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
LONG = st.one_of(
    ANY_TEXT,
    st.builds(lambda t, n: (t or "x") * n, ANY_TEXT, st.integers(1, 400)),
)


def non_empty(text: str) -> str:
    return text if text.strip() else "x"


@st.composite
def party(draw: st.DrawFn, role: PartyRole = PartyRole.TENANT) -> Party:
    return Party(
        party_id=non_empty(draw(LONG)),
        role=role,
        phone="+14155550100",
        name=draw(LONG),
        unit=draw(st.none() | LONG),
    )


@st.composite
def work_order(draw: st.DrawFn, tenant: Party, n: int) -> WorkOrder:
    status = draw(st.sampled_from([WorkOrderStatus.OPEN, WorkOrderStatus.SCHEDULED]))
    return WorkOrder(
        wo_id=draw(st.sampled_from([f"WO-{n}", f"WO-{n}-" + "9" * 90, f"WO-{n}-é✓"])),
        tenant_id=tenant.party_id,
        vendor_id=draw(st.none() | st.just("vendor-v")),
        unit=draw(st.none() | LONG),
        summary=non_empty(draw(LONG)),
        category=draw(LONG) or "general",
        status=status,
        created_at=NOW - timedelta(hours=3),
        updated_at=NOW - timedelta(hours=1),
    )


@st.composite
def world(draw: st.DrawFn) -> dict[str, Any]:
    tenant = draw(party())
    wos = [draw(work_order(tenant, n)) for n in range(draw(st.integers(1, 12)))]
    wos = list({wo.wo_id: wo for wo in wos}.values())
    clarifications = [
        PendingClarification(
            clarification_id=f"pkg-x#{n}",
            package_id="pkg-x",
            conversation_id="conv-1",
            party_id=tenant.party_id,
            question=draw(LONG),
            candidate_ids=tuple(wo.wo_id for wo in wos[:10]),
            candidate_lines=tuple(draw(LONG) for _ in wos[:10]),
            asked_at=NOW - timedelta(minutes=5),
            expires_at=NOW + timedelta(hours=1),
        )
        for n in range(draw(st.integers(0, 2)))
    ]
    texts = draw(st.lists(LONG, min_size=1, max_size=3))
    return {"tenant": tenant, "wos": wos, "clarifications": clarifications, "texts": texts}


def deps(w: dict[str, Any]) -> PipelineDeps:
    state = InMemoryStateStore()
    for wo in w["wos"]:
        state.put(
            MaestroState(
                wo_id=wo.wo_id,
                outstanding=(OutstandingItem(kind="availability", since=NOW, note="x" * 999),),
                updated_at=NOW,
            ),
            None,
        )
    pending = InMemoryPendingStore()
    for item in w["clarifications"]:
        pending.put_clarification(item)
    vendor = Party(party_id="vendor-v", role=PartyRole.VENDOR, phone="+14155550142")
    return PipelineDeps(
        buffer=InMemoryLeases(),  # type: ignore[arg-type]
        parties=InMemoryPartyDirectory([w["tenant"], vendor]),
        work_orders=InMemoryWorkOrderStore(w["wos"]),
        timeline=InMemoryTimeline(),
        pending=pending,
        decisions=InMemoryDecisionLog(),
        state=state,
        messenger=RecordingMessenger(),
        bus=InMemoryBus(),
        models=models_for(None),
        gates=InMemoryGates(),
        clock=FixedClock(NOW),
        on_call_pm_phone=PM_PHONE,
        throttle=InMemoryPageThrottle(),
        caps=InMemoryDailyCaps(),
        digest=InMemoryDigest(),
    )


BOUNDARY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@BOUNDARY
@given(w=world())
def test_the_lease_snapshot_and_the_brain_input_accept_every_stored_value(
    w: dict[str, Any],
) -> None:
    d = deps(w)
    contexts = Pipeline(d).open_contexts(w["tenant"], NOW)
    assert len(contexts) == len(w["wos"]) + len(w["clarifications"])
    pkg = package(*w["texts"], at=NOW)
    window = build_window(pkg, pkg.messages, [], contexts, "tenant")
    assert window.render()


@BOUNDARY
@given(w=world(), k=st.sampled_from([1, 5]))
def test_the_brain_and_dispose_accept_every_stored_value(w: dict[str, Any], k: int) -> None:
    d = deps(w)
    contexts = Pipeline(d).open_contexts(w["tenant"], NOW)
    pkg = package(*w["texts"], at=NOW)
    samples = OfflineBrain().samples(pkg, "tenant", contexts, k)
    policy = ConsensusPolicy(k=k)
    disposal = dispose(pkg, w["tenant"], contexts, aggregate(samples, policy))
    assert disposal.actions
    # The brain says "ambiguous" naming every stored context, or splits between two of them:
    # either way one question naming the candidates, bounded whatever their descriptions.
    ids = [c.context_id for c in contexts if len(c.context_id) <= 64][:10]
    if not ids:
        return
    unsure = [
        BrainSample(
            index=i,
            model="t",
            actions=(Clarify(params=ClarifyParams(question="which?", candidate_ids=tuple(ids))),),
        )
        for i in range(5)
    ]
    split = [
        BrainSample(
            index=i,
            model="t",
            actions=(
                RelayToOpenWo(
                    target_wo_id=ids[min(i // 3, len(ids) - 1)],
                    params=RelayToOpenWoParams(note="x"),
                ),
            ),
        )
        for i in range(5)
    ]
    for samples_ in (unsure, split):
        asked = dispose(pkg, w["tenant"], contexts, aggregate(samples_, ConsensusPolicy(k=5)))
        assert asked.actions


@BOUNDARY
@given(w=world(), data=st.data())
def test_every_lane_accepts_every_stored_value(w: dict[str, Any], data: st.DataObject) -> None:
    d = deps(w)
    contexts = tuple(Pipeline(d).open_contexts(w["tenant"], NOW))
    pkg = package(*w["texts"], at=NOW)
    wo = data.draw(st.sampled_from(w["wos"]))
    target = wo.wo_id if len(wo.wo_id) <= 64 else None
    actions: list[Any] = [
        Clarify(params=ClarifyParams(question=data.draw(LONG)[:400] or "?")),
        Escalate(params=EscalateParams(hazard=data.draw(LONG)[:200])),
        Escalate(params=EscalateParams(reason="identity", severity="info")),
        ManageExisting(params=ManageExistingParams(operation="list")),
        ManageExisting(
            params=ManageExistingParams(
                operation="cancel", wo_ids=tuple(w.wo_id for w in w["wos"])[:20]
            )
        ),
    ]
    if target is not None:
        actions += [
            RelayToOpenWo(target_wo_id=target, params=RelayToOpenWoParams(note="x" * 1000)),
            ScheduleVisit(target_wo_id=target, params=ScheduleVisitParams(availability="y" * 300)),
        ]
    for index, action in enumerate(actions):
        ctx = LaneContext(
            package=pkg,
            sender=w["tenant"],
            open_contexts=contexts,
            action_index=index,
            idempotency_key=f"{pkg.package_id}#{index}",
            work_orders=d.work_orders,
            pending=d.pending,
            parties=d.parties,
            messenger=d.messenger,
            on_call_pm_phone=PM_PHONE,
            now=NOW,
            timeline=d.timeline,
            throttle=d.throttle,
            caps=d.caps,
            digest=d.digest,
        )
        outcome = execute(action, ctx)
        assert outcome.status in {"done", "skipped"}


def test_a_context_line_is_cut_where_it_is_built() -> None:
    from maestro.domain.models import context_for_work_order

    wo = WorkOrder(
        wo_id="WO-1",
        tenant_id="t",
        unit="3B" * 100,
        summary="water " * 100,
        created_at=NOW,
        updated_at=NOW,
    )
    context: OpenContext = context_for_work_order(wo)
    assert len(context.description) <= 200
    assert context.description.endswith("[open]")
