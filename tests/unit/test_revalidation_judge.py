"""The re-validation judge (issue #21, deliverable 4): what it is shown, what its verdicts are
remembered by, and whose budget its calls come from.

Each test drives the real path: ``revalidate`` → ``Judgments.revalidation`` → ``decide()`` →
the model port, on a scripted model; what the model is shown is read back from the request it
got (its one data block)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from builders import MARIA, T0

from maestro.brain.budgeted import BudgetedModel
from maestro.brain.judgments import Judgments, decide_model_for
from maestro.brain.model_port import ModelRequest
from maestro.brain.stage_models import models_for
from maestro.domain.common import ELLIPSIS
from maestro.domain.models import (
    SNAPSHOT_VALUE_CHARS,
    Urgency,
    WorkOrder,
    WorkOrderStatus,
    WoSnapshot,
)
from maestro.domain.prompt_data import read_data_blocks
from maestro.domain.revalidate import FieldChange, Target, changed_fields, revalidate
from maestro.ports.limits import BudgetScope
from maestro_dev.scripted import ScriptedModel

VALID = {"status": "decided", "action": "valid", "confidence": 0.95}


def valid_model() -> ScriptedModel:
    return ScriptedModel(responder=lambda r: VALID if r.purpose == "decide" else None)


def radiator(wo_id: str = "WO-1", **changes: Any) -> WorkOrder:
    wo = WorkOrder(
        wo_id=wo_id,
        tenant_id=MARIA.party_id,
        unit="12C",
        summary="radiator knocks at night",
        category="heating",
        status=WorkOrderStatus.SCHEDULED,
        created_at=T0 - timedelta(days=1),
        updated_at=T0 - timedelta(days=1),
    )
    return wo.model_copy(update=changes)


def edited(then: WorkOrder, version: int, **changes: Any) -> Target:
    """A reschedule asked about ``then``; the PM has since edited it to ``version``."""
    now = then.model_copy(update={"version": version, "updated_at": T0, **changes})
    return Target(
        wo_id=then.wo_id,
        operation="reschedule",
        asked_at=T0 - timedelta(hours=2),
        then=WoSnapshot.of(then),
        current=now,
    )


def shown(call: ModelRequest) -> dict[str, Any]:
    """The facts a decide() call showed the model (its one data block)."""
    (document,) = read_data_blocks(call.turns[0].text)
    assert isinstance(document, dict)
    return document


# -- what the judge is shown ------------------------------------------------------------------


def test_the_judge_is_shown_each_edited_field_before_and_after() -> None:
    """Naive: the model was shown a constant "summary, category, urgency or unit" and could not
    tell a typo fix from a leak that turned into a flood."""
    model = valid_model()
    judgments = Judgments(decide_model_for(model))
    target = edited(
        radiator(), 3, summary="radiator pipe burst, water on the floor", urgency=Urgency.URGENT
    )

    check = revalidate([target], MARIA, judgments.revalidation)

    assert (check.outcome, check.checks[0].settled_by) == ("valid", "judge")
    facts = shown(model.calls_for("decide")[0])
    assert facts["changed"] == [
        {
            "field": "summary",
            "before": "radiator knocks at night",
            "after": "radiator pipe burst, water on the floor",
        },
        {"field": "urgency", "before": "routine", "after": "urgent"},
    ]  # category and unit did not change: not shown
    assert facts["operation"] == "reschedule"
    assert facts["status_now"] == "scheduled"


def test_long_values_are_cut_at_the_stated_bound() -> None:
    model = valid_model()
    judgments = Judgments(decide_model_for(model))
    before = "the boiler in the basement " * 40
    target = edited(radiator(summary=before), 2, summary="no heat on floor 4 " * 60)

    revalidate([target], MARIA, judgments.revalidation)

    call = model.calls_for("decide")[0]
    (change,) = shown(call)["changed"]
    for value in (change["before"], change["after"]):
        assert len(value) <= SNAPSHOT_VALUE_CHARS
        assert value.endswith(ELLIPSIS)
    assert change["after"].startswith("no heat on floor 4")
    # The bound is said to the model, in maestro's words (outside the data block).
    assert f"at most {SNAPSHOT_VALUE_CHARS} characters" in call.turns[0].text.split("<data>")[0]


def test_an_edit_past_the_bound_still_names_the_field() -> None:
    model = valid_model()
    judgments = Judgments(decide_model_for(model))
    opening = "x" * SNAPSHOT_VALUE_CHARS
    target = edited(radiator(summary=opening + " tap"), 2, summary=opening + " shower")

    revalidate([target], MARIA, judgments.revalidation)

    (change,) = shown(model.calls_for("decide")[0])["changed"]
    assert change["field"] == "summary"


def test_no_unit_is_an_empty_value_not_an_unknown_one() -> None:
    model = valid_model()
    judgments = Judgments(decide_model_for(model))
    target = edited(radiator(unit=None), 2, unit="4A")

    revalidate([target], MARIA, judgments.revalidation)

    assert shown(model.calls_for("decide")[0])["changed"] == [
        {"field": "unit", "before": "", "after": "4A"}
    ]


def test_a_question_asked_before_snapshots_kept_content_shows_before_as_unknown() -> None:
    model = valid_model()
    judgments = Judgments(decide_model_for(model))
    target = edited(radiator(), 2, category="plumbing")
    legacy = target.then.model_copy(update={"fields": None}) if target.then else None

    revalidate([target.model_copy(update={"then": legacy})], MARIA, judgments.revalidation)

    changed = shown(model.calls_for("decide")[0])["changed"]
    assert [c["field"] for c in changed] == ["summary", "category", "urgency", "unit"]
    assert {c["before"] for c in changed} == {None}
    assert changed[1]["after"] == "plumbing"


# -- what a verdict is remembered by ----------------------------------------------------------


def test_a_verdict_is_reused_only_for_the_same_work_order_and_versions() -> None:
    """Naive: the cache key was the operation, the constant and the status, so WO-1's "valid"
    was reused for every later work order with the same operation and status."""
    model = valid_model()
    judgments = Judgments(decide_model_for(model))
    change = {"summary": "radiator knocks, and now hisses"}

    def judge(target: Target) -> int:
        before = len(model.calls_for("decide"))
        assert judgments.revalidation(target, _changes(target)) == "valid"
        return len(model.calls_for("decide")) - before

    wo1_v3 = edited(radiator("WO-1"), 3, **change)
    assert judge(wo1_v3) == 3  # judged: three samples
    assert judge(wo1_v3) == 0  # the same WO, versions and change: remembered
    assert judge(edited(radiator("WO-2"), 3, **change)) == 3  # another WO, the same edit
    assert judge(edited(radiator("WO-1"), 4, **change)) == 3  # WO-1 edited once more since
    asked_later = edited(radiator("WO-1").model_copy(update={"version": 2}), 3, **change)
    assert judge(asked_later) == 3  # asked about another version


def _changes(target: Target) -> tuple[FieldChange, ...]:
    assert target.then is not None
    assert target.current is not None
    return changed_fields(target.then, target.current)


# -- whose budget the calls come from ---------------------------------------------------------


class TableBudget:
    """The persisted budget table, in memory: counts per (conversation, UTC day), shared by
    every container (every Judgments) as the real table is."""

    def __init__(self, judgment_day_calls: int) -> None:
        self.cap = judgment_day_calls
        self.judgment_calls: Counter[tuple[str, str]] = Counter()

    def reserve(self, scope: BudgetScope, at: datetime) -> bool:
        return True

    def record_tokens(self, scope: BudgetScope, at: datetime, tokens: int) -> None:
        return None

    def reserve_judgments(self, scope: BudgetScope, at: datetime, calls: int) -> bool:
        key = (scope.conversation_id, f"{at:%Y-%m-%d}")
        if self.judgment_calls[key] + calls > self.cap:
            return False
        self.judgment_calls[key] += calls
        return True


class Clock:
    def __init__(self) -> None:
        self.at = T0

    def now(self) -> datetime:
        return self.at


def test_the_judge_budget_is_per_conversation_per_day_not_per_container() -> None:
    """Naive: 60 calls per warm container, never reset: after them every conversation's judge
    took the default for as long as the container lived, and a new container started afresh."""
    inner, table, clock = valid_model(), TableBudget(judgment_day_calls=30), Clock()
    model = BudgetedModel(inner, table, clock)
    container = models_for(model).judgments
    serial = iter(range(1000))

    def judge(conversation: str, judgments: Judgments = container) -> str:
        # A new work order each time: no verdict is remembered, every judgment asks.
        target = edited(radiator(f"WO-{next(serial)}"), 2, summary="radiator leaks")
        with model.scope(conversation, "pkg-1"):
            return judgments.revalidation(target, _changes(target))

    assert [judge("conv-1") for _ in range(10)] == ["valid"] * 10  # 30 calls: the day's allowance
    calls = len(inner.calls)
    assert judge("conv-1") == "stale"  # over budget: the default, ask; no call made
    assert len(inner.calls) == calls
    # Another container (a cold start) does not refill conv-1's day.
    assert judge("conv-1", models_for(model).judgments) == "stale"
    # Other conversations have budgets of their own, whatever this container spent before.
    assert [judge("conv-2") for _ in range(10)] == ["valid"] * 10
    assert judge("conv-3") == "valid"  # the container is past 60 calls: no matter
    # The next UTC day, conv-1 has a fresh allowance.
    clock.at = T0 + timedelta(days=1)
    assert judge("conv-1") == "valid"
    assert table.judgment_calls[("conv-1", f"{T0:%Y-%m-%d}")] == 30


def test_a_judgment_takes_its_samples_whole_or_not_at_all() -> None:
    inner, table, clock = valid_model(), TableBudget(judgment_day_calls=4), Clock()
    model = BudgetedModel(inner, table, clock)
    judgments = models_for(model).judgments
    first = edited(radiator("WO-1"), 2, summary="radiator leaks")
    second = edited(radiator("WO-2"), 2, summary="radiator leaks")
    with model.scope("conv-1", "pkg-1"):
        assert judgments.revalidation(first, _changes(first)) == "valid"
        # One call left of four: not enough for three samples, so none is drawn.
        assert judgments.revalidation(second, _changes(second)) == "stale"
    assert len(inner.calls_for("decide")) == 3
    assert table.judgment_calls[("conv-1", f"{T0:%Y-%m-%d}")] == 3
