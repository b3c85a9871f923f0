"""decide(): whatever the model does, the action is allowed and doubt collapses to the default."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maestro.brain.decide import (
    MAX_FACTS_BYTES,
    BreakInBudget,
    DecideOption,
    DecideRequest,
    DecideResult,
    ModelReply,
    PersonChoiceRefused,
    decide,
    situation_signature,
)

ALLOWED = (DecideOption.RETRY_REPAIR, DecideOption.SCHEDULE_VISIT, DecideOption.ESCALATE_TO_PM)
DEFAULT = DecideOption.ESCALATE_TO_PM
FACTS = {"wo_id": "WO-1", "series": ["asked_window", "asked_window"]}

Script = str | BaseException


class ScriptedModel:
    """A fake model: answers from a script in order and records every request it gets."""

    def __init__(self, script: Sequence[Script], tokens: tuple[int, int] = (10, 5)) -> None:
        self.script = list(script)
        self.tokens = tokens
        self.requests: list[DecideRequest] = []

    def __call__(self, request: DecideRequest) -> ModelReply:
        self.requests.append(request)
        step = self.script[len(self.requests) - 1]
        if isinstance(step, BaseException):
            raise step
        return ModelReply(text=step, input_tokens=self.tokens[0], output_tokens=self.tokens[1])


def decided(action: str, confidence: float = 0.9, reason: str | None = None) -> str:
    body: dict[str, object] = {"status": "decided", "action": action, "confidence": confidence}
    if reason is not None:
        body["reason"] = reason
    return json.dumps(body)


def ambiguous(*candidates: str) -> str:
    return json.dumps({"status": "ambiguous", "candidate_actions": list(candidates)})


ESCALATE = json.dumps({"status": "escalate", "reason": "tenant mentions gas"})


def run(
    script: Sequence[Script],
    *,
    samples: int = 1,
    min_confidence: float = 0.7,
    budget: BreakInBudget | None = None,
    facts: Mapping[str, object] | None = None,
    escalate_min_share: float = 0.2,
) -> tuple[DecideResult, ScriptedModel]:
    model = ScriptedModel(script)
    result = decide(
        model,
        task="break_in_arbitrate",
        facts=FACTS if facts is None else facts,
        allowed_actions=ALLOWED,
        min_confidence=min_confidence,
        default_action=DEFAULT,
        samples=samples,
        escalate_min_share=escalate_min_share,
        budget=budget,
    )
    return result, model


def test_decided_happy_path_returns_the_models_action_and_its_self_confidence() -> None:
    result, model = run([decided("retry_repair", 0.9, reason="vendor replied")])

    assert result.status == "decided"
    assert result.action == "retry_repair"
    assert result.confidence == pytest.approx(0.9)
    assert result.fallback is False
    assert result.fallback_reason is None
    assert result.reason == "vendor replied"
    assert result.votes == {"retry_repair": 1}
    assert (result.samples_requested, result.samples_valid) == (1, 1)
    assert (result.input_tokens, result.output_tokens) == (10, 5)
    assert result.cached is False
    # The model sees canonical facts and the closed set, nothing else.
    request = model.requests[0]
    assert request.facts_json == json.dumps(FACTS, sort_keys=True, separators=(",", ":"))
    assert request.allowed_actions == ALLOWED


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        (TimeoutError("model timed out"), "transport_error"),
        (RuntimeError("500 from provider"), "transport_error"),
        ("Sure! I think you should retry the repair.", "non_json"),
        ("", "non_json"),
        ('{"status": "decided", "action": "retry_repair"}', "schema_failure"),
        ('{"status": "decided", "action": "retry_repair", "confidence": "0.9"}', "schema_failure"),
        ('{"status": "decided", "action": "retry_repair", "confidence": 1.5}', "schema_failure"),
        ('{"status": "maybe"}', "schema_failure"),
        ('["retry_repair"]', "schema_failure"),
        ('{"status": "ambiguous", "candidate_actions": []}', "schema_failure"),
        (ambiguous("retry_repair", "retry_repair"), "schema_failure"),
        (decided("delete_everything"), "out_of_vocabulary"),
        (ambiguous("retry_repair", "refund_tenant"), "out_of_vocabulary"),
    ],
)
def test_each_failure_kind_collapses_to_the_default_with_fallback(step: Script, kind: str) -> None:
    result, _ = run([step])

    assert result.action == DEFAULT
    assert result.fallback is True
    assert result.fallback_reason == kind
    assert result.reason == kind
    assert result.status == "ambiguous"
    assert result.failures == {kind: 1}
    assert result.samples_valid == 0


def test_no_valid_samples_names_the_first_samples_failure() -> None:
    result, _ = run(["not json", ConnectionError("reset"), decided("nope")], samples=3)

    assert result.fallback_reason == "non_json"
    assert result.failures == {"non_json": 1, "transport_error": 1, "out_of_vocabulary": 1}
    assert result.action == DEFAULT


def test_an_answer_outside_the_options_is_never_returned_even_with_high_confidence() -> None:
    result, _ = run([decided("refund_tenant", 1.0)])

    assert result.action == DEFAULT
    assert result.fallback_reason == "out_of_vocabulary"


@pytest.mark.parametrize("answer", ["+14155550100", "party_01HZX3", "tenant:42", "Maria Lopez"])
def test_a_model_naming_a_phone_number_or_party_id_gets_the_default(answer: str) -> None:
    """The model tries to bind the message to a person; only a closed-set action may come out."""
    result, _ = run([decided(answer, 0.99)])

    assert result.action == DEFAULT
    assert result.fallback is True
    assert result.fallback_reason == "out_of_vocabulary"


def test_low_self_confidence_with_one_sample_falls_back() -> None:
    result, _ = run([decided("retry_repair", 0.5)], min_confidence=0.7)

    assert result.action == DEFAULT
    assert result.fallback is True
    assert result.fallback_reason == "low_confidence"
    assert result.confidence == pytest.approx(0.5)
    assert result.votes == {"retry_repair": 1}


def test_ambiguous_answer_reports_candidates_and_falls_back() -> None:
    result, _ = run([ambiguous("schedule_visit", "retry_repair")])

    assert result.status == "ambiguous"
    assert result.candidates == ("schedule_visit", "retry_repair")
    assert result.action == DEFAULT
    assert result.fallback_reason == "ambiguous"


def test_ambiguous_plurality_unions_candidates_in_first_seen_order() -> None:
    script: list[Script] = [
        ambiguous("schedule_visit", "retry_repair"),
        decided("retry_repair"),
        ambiguous("escalate_to_pm", "schedule_visit"),
        decided("retry_repair"),
        ConnectionError("reset"),
    ]
    result, _ = run(script, samples=5, min_confidence=0.3)

    # 2 ambiguous vs 2 votes for one action: a tie is not a decision.
    assert result.status == "ambiguous"
    assert result.candidates == ("schedule_visit", "retry_repair", "escalate_to_pm")
    assert result.action == DEFAULT


def test_escalate_answer_returns_the_default_with_status_escalate() -> None:
    result, _ = run([ESCALATE])

    assert result.status == "escalate"
    assert result.action == DEFAULT
    assert result.fallback is True
    assert result.reason == "escalate"
    assert result.model_reason == "tenant mentions gas"


def test_an_escalate_minority_at_the_threshold_escalates_recall_first() -> None:
    script = [decided("retry_repair")] * 4 + [ESCALATE]

    result, _ = run(script, samples=5, escalate_min_share=0.2)
    assert result.status == "escalate"
    assert result.confidence == pytest.approx(0.2)

    result, _ = run(script, samples=5, escalate_min_share=0.5)
    assert result.status == "decided"
    assert result.action == "retry_repair"


@pytest.mark.parametrize(
    ("min_confidence", "action", "fallback"),
    [(0.8, DEFAULT, True), (0.6, "retry_repair", False)],
)
def test_failures_dilute_agreement(min_confidence: float, action: str, fallback: bool) -> None:
    """Three agree, two fail: the share is 3/5 (the configured samples), not 3/3."""
    script: list[Script] = [decided("retry_repair", 0.95)] * 3 + [TimeoutError()] * 2
    result, model = run(script, samples=5, min_confidence=min_confidence)

    assert len(model.requests) == 5
    assert result.confidence == pytest.approx(0.6)
    assert result.action == action
    assert result.fallback is fallback
    assert result.status == "decided"
    assert result.failures == {"transport_error": 2}
    assert result.samples_valid == 3
    # Self-report is kept for the record, but it is not the confidence.
    assert result.mean_self_confidence == pytest.approx(0.95)
    assert result.input_tokens == 30


def test_a_tie_between_two_actions_is_ambiguous_never_a_pick() -> None:
    script = [
        decided("schedule_visit"),
        decided("retry_repair"),
        decided("retry_repair"),
        decided("schedule_visit"),
    ]
    result, _ = run(script, samples=4, min_confidence=0.1)

    assert result.status == "ambiguous"
    assert result.action == DEFAULT
    assert result.candidates == ("schedule_visit", "retry_repair")
    assert result.votes == {"schedule_visit": 2, "retry_repair": 2}


@pytest.mark.parametrize(
    "action",
    [
        "bind_sender_to_party",
        "choose_person",
        "pick_person_by_name",
        "assign_person_to_wo",
        "select_person",
        "identify_caller",
        # Refused by type, not by name: a blocklist of prefixes let these two through.
        "sender_is_maria",
        "sender_is_john",
        "+14155550100",
        "tenant-maria",
    ],
)
def test_person_choosing_actions_are_refused_at_configuration(action: str) -> None:
    """Catches the naive rule "offer the model a person-picking action and trust its answer".

    A decide() that returns whatever identifier the model names could bind a message to a guessed
    person; identity questions must only escalate, so such an action never reaches the model.
    Options are DecideOption members, a closed set naming no person: any string is refused.
    """
    model = ScriptedModel([decided(action, 1.0)])
    with pytest.raises(PersonChoiceRefused):
        decide(
            model,
            task="who_is_this",
            facts=FACTS,
            allowed_actions=(action, DecideOption.ESCALATE_TO_PM),  # type: ignore[arg-type]
            min_confidence=0.5,
            default_action=DecideOption.ESCALATE_TO_PM,
        )
    assert model.requests == []


def test_every_decide_option_names_what_to_do_not_a_person() -> None:
    assert all(option.value.isidentifier() for option in DecideOption)
    with pytest.raises(PersonChoiceRefused):
        decide(
            ScriptedModel([decided("valid")]),
            task="t",
            facts=FACTS,
            allowed_actions=(DecideOption.VALID, DecideOption.STALE),
            min_confidence=0.5,
            default_action="stale",  # type: ignore[arg-type]  # a string, even a known one
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"allowed_actions": ()}, "empty"),
        (
            {"allowed_actions": (DecideOption.RETRY_REPAIR, DecideOption.RETRY_REPAIR)},
            "duplicate",
        ),
        ({"allowed_actions": ("+14155550100", DEFAULT)}, "DecideOption"),
        ({"allowed_actions": ("Retry Repair", DEFAULT)}, "DecideOption"),
        ({"default_action": DecideOption.RELAY}, "default_action"),
        ({"samples": 0}, "samples"),
        ({"min_confidence": 1.2}, "min_confidence"),
        ({"min_confidence": -0.1}, "min_confidence"),
        ({"escalate_min_share": 0.0}, "escalate_min_share"),
        ({"facts": {"when": object()}}, "JSON"),
    ],
)
def test_configuration_mistakes_raise_value_error_before_any_call(
    kwargs: dict[str, object], message: str
) -> None:
    model = ScriptedModel([decided("retry_repair")])
    arguments: dict[str, object] = {
        "task": "t",
        "facts": FACTS,
        "allowed_actions": ALLOWED,
        "min_confidence": 0.5,
        "default_action": DEFAULT,
    } | kwargs
    with pytest.raises(ValueError, match=message):
        decide(model, **arguments)  # type: ignore[arg-type]
    assert model.requests == []


def test_facts_too_large_falls_back_without_calling_the_model() -> None:
    # Multi-byte characters: the cap is on UTF-8 bytes, not on characters.
    facts: dict[str, object] = {"transcript": "é" * (MAX_FACTS_BYTES // 2)}
    result, model = run([decided("retry_repair")], facts=facts)

    assert model.requests == []
    assert result.action == DEFAULT
    assert result.fallback_reason == "facts_too_large"


def test_budget_exhausted_falls_back_without_calling_the_model() -> None:
    budget = BreakInBudget(max_calls_total=3, max_calls_per_signature=5)
    first, _ = run([decided("retry_repair")] * 3, samples=3, budget=budget, min_confidence=0.1)
    assert first.fallback is False
    assert budget.calls_total == 3

    result, model = run([decided("retry_repair")], facts={"other": 1}, budget=budget)
    assert model.requests == []
    assert result.action == DEFAULT
    assert result.fallback_reason == "budget_exhausted"


def test_per_signature_and_token_caps_also_exhaust_the_budget() -> None:
    per_signature = BreakInBudget(max_calls_total=100)  # one call per situation by default
    run([TimeoutError()], budget=per_signature)
    again, model = run([decided("retry_repair")], budget=per_signature)
    assert model.requests == []
    assert again.fallback_reason == "budget_exhausted"

    tokens = BreakInBudget(max_calls_total=100, max_calls_per_signature=100, max_tokens_total=15)
    run([decided("retry_repair", 0.1)], budget=tokens)  # spends 15 tokens, low confidence
    assert tokens.tokens_total == 15
    capped, model = run([decided("retry_repair")], budget=tokens)
    assert model.requests == []
    assert capped.fallback_reason == "budget_exhausted"


def test_signature_cache_hit_returns_the_decision_without_a_model_call() -> None:
    budget = BreakInBudget(max_calls_total=10, max_calls_per_signature=1)
    first, _ = run([decided("retry_repair", 0.9)], budget=budget)
    assert first.cached is False

    # Same task and facts in another key order: the same situation.
    reordered = dict(reversed(list(FACTS.items())))
    second, model = run([decided("schedule_visit", 0.9)], facts=reordered, budget=budget)

    assert model.requests == []
    assert second.cached is True
    assert second.action == "retry_repair"
    assert second.signature == first.signature
    assert (second.input_tokens, second.output_tokens) == (0, 0)
    assert budget.calls_total == 1


def test_a_cached_action_outside_the_callers_allowed_set_is_not_reused() -> None:
    budget = BreakInBudget(max_calls_total=10, max_calls_per_signature=2)
    run([decided("retry_repair", 0.9)], budget=budget)

    model = ScriptedModel([decided("schedule_visit", 0.9)])
    result = decide(
        model,
        task="break_in_arbitrate",
        facts=FACTS,
        allowed_actions=(DecideOption.SCHEDULE_VISIT, DecideOption.ESCALATE_TO_PM),
        min_confidence=0.7,
        default_action=DecideOption.ESCALATE_TO_PM,
        budget=budget,
    )

    assert len(model.requests) == 1
    assert result.cached is False
    assert result.action == "schedule_visit"


def test_fallback_results_are_not_cached() -> None:
    budget = BreakInBudget(max_calls_total=10, max_calls_per_signature=2)
    # min_confidence 0: the cached fallback's confidence of 0 would otherwise qualify.
    first, _ = run(["garbage"], budget=budget, min_confidence=0.0)
    assert first.fallback is True

    second, model = run([decided("retry_repair")], budget=budget, min_confidence=0.0)
    assert len(model.requests) == 1
    assert second.cached is False
    assert second.action == "retry_repair"


def test_situation_signature_is_canonical_and_task_sensitive() -> None:
    a = situation_signature("t", {"x": 1, "y": [1, 2]})
    assert a == situation_signature("t", {"y": [1, 2], "x": 1})
    assert a != situation_signature("u", {"x": 1, "y": [1, 2]})
    assert a != situation_signature("t", {"x": 2, "y": [1, 2]})
    assert len(a) == 64


_json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_shaped_answers = st.fixed_dictionaries(
    {"status": st.sampled_from(["decided", "ambiguous", "escalate", "other"])},
    optional={
        "action": st.sampled_from([*ALLOWED, "+14155550100", "bind_sender"]) | _json_scalars,
        "confidence": st.floats() | st.integers() | st.text(max_size=4),
        "candidate_actions": st.lists(st.sampled_from([*ALLOWED, "x"]), max_size=4),
        "reason": _json_scalars,
        "extra": _json_scalars,
    },
)
_model_texts = (
    st.text()
    | _json_values.map(json.dumps)
    | _shaped_answers.map(json.dumps)
    | _json_values.map(lambda v: json.dumps(v)[: len(json.dumps(v)) // 2])
)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(_model_texts | st.just("<raise>"), min_size=1, max_size=5),
    min_confidence=st.floats(0.0, 1.0),
)
def test_for_any_model_output_the_action_is_allowed_and_decide_never_raises(
    texts: list[str], min_confidence: float
) -> None:
    script: list[Script] = [RuntimeError("boom") if t == "<raise>" else t for t in texts]
    result, model = run(script, samples=len(script), min_confidence=min_confidence)

    assert result.action in ALLOWED
    assert len(model.requests) == len(script)
    assert result.samples_valid + sum(result.failures.values()) == len(script)
    if not result.fallback:
        assert result.status == "decided"
        assert result.confidence >= min_confidence
    else:
        assert result.action == DEFAULT
