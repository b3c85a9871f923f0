"""The model-backed stages on a scripted model: adaptive sampling, the id check, the manage
agent's bounded tool loop, budgets, the judgments and the triage's recall-first reading."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from builders import MARIA, T0, package, wo_context

from maestro.brain.budgeted import BudgetedModel
from maestro.brain.judgments import Judgments, decide_model_for
from maestro.brain.manage_agent import ManageAgent
from maestro.brain.model_port import ModelAnswer, ModelError, ModelRequest, ToolUse
from maestro.brain.reasoning import ModelBrain
from maestro.brain.sample_drawing import draw
from maestro.brain.triage import parse_triage
from maestro.domain.consensus import ConsensusPolicy, ConsensusStatus, aggregate
from maestro.domain.memory import BrainRequest, build_window
from maestro.domain.models import Route, WorkOrder, WoSnapshot
from maestro.domain.revalidate import FieldChange, Target
from maestro.ports.limits import BudgetScope
from maestro_dev.scripted import ScriptedModel


class Clock:
    def now(self) -> datetime:
        return T0


RELAY = {
    "actions": [
        {
            "lane": "relay_to_open_wo",
            "target_wo_id": "WO-204",
            "confidence": 0.9,
            "params": {"note": "the leak is back"},
        }
    ]
}
CREATE = {"actions": [{"lane": "create_wo", "confidence": 0.9, "params": {"summary": "a leak"}}]}


def request(text: str = "the leak is back") -> BrainRequest:
    pkg = package(text)
    contexts = (wo_context("WO-204"),)
    window = build_window(pkg, pkg.messages, [], contexts, "tenant")
    return BrainRequest(package=pkg, sender_role="tenant", contexts=contexts, window=window)


def test_two_agreeing_samples_are_enough_and_a_split_draws_to_k() -> None:
    agreeing = ScriptedModel({"reasoning": [RELAY, RELAY, RELAY]})
    samples = draw(ModelBrain(agreeing), request(), ConsensusPolicy().plan())
    assert len(samples) == 2  # a clear package costs two reasoning calls
    result = aggregate(samples, ConsensusPolicy())
    assert result.status is ConsensusStatus.DECIDED
    assert result.verdicts[0].share == 1.0  # 2 of the 2 drawn, not 2 of a planned 5

    split = ScriptedModel({"reasoning": [RELAY, CREATE, RELAY, CREATE, RELAY]})
    samples = draw(ModelBrain(split), request(), ConsensusPolicy().plan())
    assert len(samples) == 5
    assert aggregate(samples, ConsensusPolicy()).status is ConsensusStatus.AMBIGUOUS


def test_an_id_the_window_did_not_list_fails_the_sample() -> None:
    foreign = {"actions": [{**RELAY["actions"][0], "target_wo_id": "WO-9"}]}
    brain = ModelBrain(ScriptedModel({"reasoning": [foreign]}))
    sample = brain.sample(request(), 0)
    assert (sample.failure, "WO-9" in sample.detail) == ("out_of_vocabulary", True)


def test_a_model_error_is_a_failed_sample_never_an_exception() -> None:
    brain = ModelBrain(ScriptedModel({"reasoning": [ModelError("timeout", "20 s")]}))
    assert brain.sample(request(), 0).failure == "timeout"
    assert brain.sample(request(), 1).failure == "transport_error"  # nothing scripted left


# -- the manage agent ------------------------------------------------------------------------


def wo(wo_id: str, summary: str) -> WorkOrder:
    return WorkOrder(
        wo_id=wo_id,
        tenant_id=MARIA.party_id,
        summary=summary,
        created_at=T0 - timedelta(days=1),
        updated_at=T0 - timedelta(hours=1),
    )


WOS = [wo("WO-204", "leak under the kitchen sink"), wo("WO-211", "bathroom ceiling leak")]


def calls(*uses: tuple[str, dict[str, Any]]) -> ModelAnswer:
    return ModelAnswer(
        model="scripted",
        tool_uses=tuple(
            ToolUse(id=f"t{n}", name=name, input=args) for n, (name, args) in enumerate(uses)
        ),
        input_tokens=100,
        output_tokens=20,
    )


def test_the_agent_resolves_the_first_one_against_real_data_and_holds_it() -> None:
    model = ScriptedModel(
        {
            "manage": [
                calls(("list_work_orders", {})),
                calls(("cancel_work_orders", {"wo_ids": ["WO-204"]})),
            ]
        }
    )
    outcome = ManageAgent(model).run("cancel the first one", WOS, T0)
    assert outcome is not None
    assert (outcome.kind, outcome.operation, outcome.wo_ids, outcome.turns) == (
        "hold",
        "cancel",
        ("WO-204",),
        2,
    )
    listing = model.calls[1].turns[-1].tool_results[0].content
    assert "WO-211" in listing  # the model saw the real list


def test_the_agent_never_holds_an_id_that_is_not_the_partys() -> None:
    foreign = calls(("cancel_work_orders", {"wo_ids": ["WO-9"]}))
    model = ScriptedModel({"manage": [foreign] * 5})
    assert ManageAgent(model).run("cancel WO-9", WOS, T0) is None  # bounded: 5 turns, no hold
    assert len(model.calls) == 5
    assert all(r.is_error for r in model.calls[-1].turns[-1].tool_results)


def test_the_agent_answers_a_question_and_falls_back_on_a_model_error() -> None:
    replying = ScriptedModel({"manage": [ModelAnswer(model="s", text="You have 2 open requests.")]})
    answered = ManageAgent(replying).run("what do I have open?", WOS, T0)
    assert answered is not None
    assert answered.reply == "You have 2 open requests."
    assert (
        ManageAgent(ScriptedModel({"manage": [ModelError("overloaded")]})).run("x", WOS, T0) is None
    )


# -- budgets ------------------------------------------------------------------------------------


class CountingBudget:
    def __init__(self, calls: int) -> None:
        self.left = calls
        self.tokens = 0

    def reserve(self, scope: BudgetScope, at: datetime) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True

    def record_tokens(self, scope: BudgetScope, at: datetime, tokens: int) -> None:
        self.tokens += tokens

    def reserve_judgments(self, scope: BudgetScope, at: datetime, calls: int) -> bool:
        return self.reserve(scope, at)


def test_a_call_over_budget_is_not_made() -> None:
    inner = ScriptedModel({"reasoning": [RELAY, RELAY, RELAY]})
    budget = CountingBudget(calls=2)
    model = BudgetedModel(inner, budget, Clock())
    brain = ModelBrain(model)
    with model.scope("conv-1", "pkg-1"):
        samples = [brain.sample(request(), i) for i in range(3)]
    assert [s.failure for s in samples] == [None, None, "transport_error"]
    assert "budget" in samples[2].detail
    assert len(inner.calls) == 2  # the third call was never made
    assert budget.tokens > 0
    with pytest.raises(ModelError, match="no budget scope"):
        model.ask(inner.calls[0])


# -- judgments and triage -------------------------------------------------------------------


def test_judgments_on_the_model_and_their_defaults_without_one() -> None:
    target = Target(
        wo_id="WO-204",
        operation="cancel",
        asked_at=T0,
        then=WoSnapshot.of(WOS[0]),
        current=WOS[0],
    )
    valid = {"status": "decided", "action": "valid", "confidence": 0.95}
    judged = Judgments(decide_model_for(ScriptedModel({"decide": [valid] * 3})))
    edit = (FieldChange(field="summary", before="a leak", after="a flood"),)
    assert judged.revalidation(target, edit) == "valid"
    unsure = {"status": "ambiguous", "candidate_actions": ["valid", "stale"]}
    assert (
        Judgments(decide_model_for(ScriptedModel({"decide": [unsure] * 3}))).revalidation(
            target, edit
        )
        == "stale"
    )
    offline = Judgments(None)
    assert offline.revalidation(target, ()) == "stale"
    assert offline.break_in("loop", [], T0)
    assert offline.answers_the_question("which?", [], "ok")


def test_the_triage_is_recall_first() -> None:
    said = parse_triage(
        {"route": "reasoning", "severity": "emergency", "confidence": 0.6, "evidence": "x"}
    )
    assert said.route is Route.ESCALATE
    bare = parse_triage(
        {"route": "escalate", "severity": "none", "confidence": 0.6, "evidence": ""}
    )
    assert bare.severity == "urgent"


def test_the_scripted_model_says_what_it_is_and_refuses_an_unscripted_call() -> None:
    model = ScriptedModel()
    assert "no model is called" in model.describe()
    with pytest.raises(ModelError) as raised:
        model.ask(
            ModelRequest(
                purpose="probe",
                tier="cheap",
                system="s",
                turns=({"role": "user", "text": "x"},),  # type: ignore[arg-type]
            )
        )
    assert raised.value.kind == "no_script"
