"""Completion from the field without a model: the offline brain's rule 9 and a PM's close, the
roles dispose applies to them, and the lifecycle's new steps (docs/completion.md)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from builders import T0, package, wo_context, work_order

from maestro.brain.offline import OfflineBrain
from maestro.domain.actions import (
    Action,
    CreateWo,
    Lane,
    ManageExisting,
    ManageExistingParams,
    RelayToOpenWo,
)
from maestro.domain.consensus import ConsensusPolicy, aggregate
from maestro.domain.dispose import dispose
from maestro.domain.memory import SenderRole
from maestro.domain.models import (
    InvalidTransitionError,
    OpenContext,
    Party,
    PartyRole,
    WorkOrderStatus,
)
from maestro.domain.roles import may_manage

BRAIN = OfflineBrain()
VENDOR = Party(party_id="vendor-kim", role=PartyRole.VENDOR, phone="+14155550161")
TENANT = Party(party_id="tenant-ines", role=PartyRole.TENANT, phone="+14155550162")
PM = Party(party_id="pm-lou", role=PartyRole.PM, phone="+14155550163", property_ids=("larch",))
SENDERS = {"vendor": VENDOR, "tenant": TENANT, "pm": PM}


def _job(
    wo_id: str,
    description: str,
    status: WorkOrderStatus = WorkOrderStatus.ASSIGNED,
    relation: str = "vendor",
) -> OpenContext:
    return wo_context(wo_id, description).model_copy(
        update={"wo_status": status, "relation": relation}
    )


def _plan(text: str, contexts: Sequence[OpenContext], role: SenderRole) -> tuple[Action, ...]:
    samples = BRAIN.samples(package(text), role, contexts)
    plans = {s.actions for s in samples}
    assert len(plans) == 1, plans
    (plan,) = plans
    assert plan is not None
    return plan


def _completes(plan: tuple[Action, ...]) -> tuple[str, ...] | None:
    (action,) = plan
    if isinstance(action, ManageExisting) and action.params.operation == "complete":
        return action.params.wo_ids
    return None


FAUCET = _job("WO-81", "kitchen faucet sprays sideways, unit 7A")
HEATER = _job("WO-82", "baseboard heater in the bedroom is cold, unit 2D")


@pytest.mark.parametrize(
    "text",
    ["new aerator on, we're good to go", "faucet's fixed", "Terminé, ya quedó", "done ✅"],
)
def test_a_vendors_report_on_their_one_job_completes_it(text: str) -> None:
    plan = _plan(text, [FAUCET], "vendor")
    assert _completes(plan) == ("WO-81",)
    samples = BRAIN.samples(package(text), "vendor", [FAUCET])
    disposal = dispose(package(text), VENDOR, [FAUCET], aggregate(samples, ConsensusPolicy(k=5)))
    assert [q.action.lane for q in disposal.actions] == [Lane.MANAGE_EXISTING]


@pytest.mark.parametrize(
    "text", ["stopping here for the day, will finish thursday", "almost done, 10 min", "done?"]
)
def test_work_left_is_no_completion(text: str) -> None:
    assert _completes(_plan(text, [FAUCET], "vendor")) is None


def test_with_two_jobs_the_one_named_by_its_words_or_none() -> None:
    assert _completes(_plan("the heater is fixed", [FAUCET, HEATER], "vendor")) == ("WO-82",)
    assert _completes(_plan("WO-81 wrapped up", [FAUCET, HEATER], "vendor")) == ("WO-81",)
    # None named: the lane asks which, listing their jobs; nothing is bound by guess.
    assert _completes(_plan("all finished, leaving now", [FAUCET, HEATER], "vendor")) == ()


REPORTED = _job(
    "WO-81",
    "kitchen faucet sprays sideways, unit 7A",
    WorkOrderStatus.COMPLETION_REPORTED,
    relation="tenant",
)


def test_the_tenants_yes_completes_and_a_complaint_goes_back_as_a_note() -> None:
    assert _completes(_plan("Yes, all good now", [REPORTED], "tenant")) == ("WO-81",)
    (relay,) = _plan("it still sprays when I turn it hot", [REPORTED], "tenant")
    assert isinstance(relay, RelayToOpenWo)
    assert relay.target_wo_id == "WO-81"


def test_a_new_problem_of_the_tenant_is_no_answer_about_the_reported_job() -> None:
    plan = _plan("the dryer is broken and won't start", [REPORTED], "tenant")
    assert [type(a) for a in plan] == [CreateWo]


def test_a_yes_means_nothing_to_the_rule_without_a_reported_job() -> None:
    assert (
        _completes(_plan("yes", [FAUCET.model_copy(update={"relation": "tenant"})], "tenant"))
        is None
    )


MANAGED = _job("WO-81", "kitchen faucet sprays sideways, unit 7A", relation="pm")


@pytest.mark.parametrize("text", ["close out WO-81", "mark wo-81 complete", "WO-81 is all set"])
def test_a_pm_closes_by_text(text: str) -> None:
    assert _completes(_plan(text, [MANAGED], "pm")) == ("WO-81",)


@pytest.mark.parametrize("text", ["is WO-81 done?", "don't close WO-81 yet"])
def test_a_pm_question_or_a_negation_closes_nothing(text: str) -> None:
    assert _completes(_plan(text, [MANAGED], "pm")) is None


def test_a_vendor_may_only_list_and_complete() -> None:
    assert may_manage("complete", "vendor")
    assert may_manage("list", "vendor")
    assert not may_manage("cancel", "vendor")
    assert not may_manage("reschedule", "vendor")
    cancel = ManageExisting(params=ManageExistingParams(operation="cancel", wo_ids=("WO-81",)))
    text = "cancel WO-81"
    samples = [
        s.model_copy(update={"actions": (cancel,)})
        for s in BRAIN.samples(package(text), "vendor", [FAUCET])
    ]
    disposal = dispose(package(text), VENDOR, [FAUCET], aggregate(samples, ConsensusPolicy(k=5)))
    assert Lane.MANAGE_EXISTING not in [q.action.lane for q in disposal.actions]


def test_the_lifecycle_of_a_reported_job() -> None:
    assigned = work_order("WO-81", status=WorkOrderStatus.ASSIGNED, vendor_id="vendor-kim")
    reported = assigned.report_completion(T0)
    assert reported.status is WorkOrderStatus.COMPLETION_REPORTED
    done = reported.complete(T0)
    assert (done.status, done.rating_requested, done.version) == (
        WorkOrderStatus.COMPLETED,
        True,
        assigned.version + 2,
    )
    assert reported.reopen(T0).status is WorkOrderStatus.ASSIGNED
    with pytest.raises(InvalidTransitionError):
        work_order("WO-83").report_completion(T0)  # open, no vendor: nothing to report
    with pytest.raises(InvalidTransitionError):
        assigned.reopen(T0)
    with pytest.raises(InvalidTransitionError):
        done.complete(T0)
