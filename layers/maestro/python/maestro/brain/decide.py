"""``decide()``: the one primitive for a bounded model judgment (seed 003's forgeDecide/Consensus).

The model picks one action from a closed, caller-supplied set, given a bounded summary of facts.
Whatever the model does (raise, ramble, answer outside the set, hedge, ask for a human), the result
is an action from ``allowed_actions``: on any doubt it is the caller's ``default_action`` with
``fallback=True``. The worst case is a deterministic action, never a crash.

Identity questions ("which tenant is this?") must only ever escalate: the model must never guess a
person. So the options are typed: ``allowed_actions`` must be members of :class:`DecideOption`, a
closed set of *what to do* that names no person; anything else (a string such as
"sender_is_maria", a phone number, a party id) is refused before any call
(:class:`PersonChoiceRefused`), whatever its name. A caller asking anything identity-related
passes ``DecideOption.ESCALATE_TO_PM`` as the default, so every doubt ends with a human.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from functools import cache
from typing import Annotated, Literal, Protocol

from pydantic import Field, StrictStr, TypeAdapter, ValidationError, model_validator

from maestro.domain.common import Frozen
from maestro.domain.votes import Ballot, Reading, tally

MAX_FACTS_BYTES = 20_480
"""Facts are a bounded situation summary; past this the model is not asked at all."""


class DecideOption(StrEnum):
    """Every option a ``decide()`` call may offer the model: what to do, never whom. A person is
    not a member and cannot become one at run time, so no call can bind a message to a guessed
    person; identity questions only escalate."""

    VALID = "valid"
    STALE = "stale"
    ANSWER = "answer"
    NEW_TOPIC = "new_topic"
    ASK_AGAIN = "ask_again"
    RETRY_REPAIR = "retry_repair"
    SCHEDULE_VISIT = "schedule_visit"
    RELAY = "relay"
    EMERGENCY = "emergency"
    NOT_EMERGENCY = "not_emergency"
    ESCALATE_TO_PM = "escalate_to_pm"


Status = Literal["decided", "ambiguous", "escalate"]
FailureKind = Literal["transport_error", "non_json", "schema_failure", "out_of_vocabulary"]
"""A failed sample, in the brain's own failure vocabulary (``maestro.domain.records``)."""
FallbackReason = Literal[
    "facts_too_large",
    "budget_exhausted",
    "escalate",
    "ambiguous",
    "low_confidence",
    "transport_error",
    "non_json",
    "schema_failure",
    "out_of_vocabulary",
]


class PersonChoiceRefused(ValueError):  # noqa: N818  # the name the design uses
    """An allowed action would let the model bind a message to a person it guessed."""


class ModelReply(Frozen):
    """What the model port returns for one sample."""

    text: str
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


class DecideRequest(Frozen):
    """What the model port is asked for one sample; ``sample_index`` lets a fake vary by sample."""

    task: str
    facts_json: str
    allowed_actions: tuple[str, ...]
    sample_index: int = Field(ge=0)


DecideModel = Callable[[DecideRequest], ModelReply]
"""The model port. It may raise any ``Exception``; that sample then counts as a transport error."""


# --- the tri-state answer the model must give (strict: a string "0.9" is not a confidence) ---


class _Decided(Frozen):
    status: Literal["decided"]
    action: StrictStr
    confidence: float = Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False)
    reason: StrictStr | None = None
    stable: bool | None = Field(default=None, strict=True)


class _Ambiguous(Frozen):
    status: Literal["ambiguous"]
    candidate_actions: tuple[StrictStr, ...] = Field(min_length=1)
    reason: StrictStr | None = None

    @model_validator(mode="after")
    def _no_duplicates(self) -> _Ambiguous:
        if len(set(self.candidate_actions)) != len(self.candidate_actions):
            raise ValueError("candidate_actions must be duplicate-free")
        return self


class _Escalate(Frozen):
    status: Literal["escalate"]
    reason: StrictStr | None = None


_Answer = Annotated[_Decided | _Ambiguous | _Escalate, Field(discriminator="status")]


@cache
def _answer_adapter() -> TypeAdapter[_Decided | _Ambiguous | _Escalate]:
    # Built on the first judgment, not at import: every pipeline step imports this module.
    return TypeAdapter(_Answer)


class DecideResult(Frozen):
    """The outcome of one ``decide()`` call; ``action`` is always one of the allowed actions.

    ``reason`` is the fallback reason when ``fallback`` is true, else the model's own reason.
    ``confidence`` is, for a decided outcome, the self-report (one sample) or the vote share (more);
    for escalate the share of escalate answers; for ambiguous the best single action's vote share.
    Token counts are what this call spent (zero for a cache hit or a refusal before any call).
    """

    status: Status
    action: str
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str
    fallback: bool
    fallback_reason: FallbackReason | None = None
    model_reason: str | None = Field(
        default=None, description="The first reason a model sample gave for this outcome"
    )
    votes: dict[str, int] = Field(default_factory=dict)
    candidates: tuple[str, ...] = ()
    failures: dict[str, int] = Field(default_factory=dict)
    samples_requested: int = Field(ge=1)
    samples_valid: int = Field(ge=0)
    mean_self_confidence: float | None = None
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    signature: str
    cached: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> DecideResult:
        if self.fallback != (self.fallback_reason is not None):
            raise ValueError("fallback and fallback_reason must agree")
        if self.samples_valid > self.samples_requested:
            raise ValueError("more valid samples than requested")
        return self


class DecideBudget(Protocol):
    """What ``decide()`` asks of a budget: a remembered result for a signature, leave to spend
    (asked once, right before the samples are drawn; a persisted budget takes them then), and
    what a run spent and concluded."""

    def cached(self, signature: str) -> DecideResult | None: ...

    def can_spend(self, signature: str, calls: int) -> bool: ...

    def record(self, signature: str, *, calls: int, tokens: int) -> None: ...

    def remember(self, signature: str, result: DecideResult) -> None: ...


class BreakInBudget:
    """Caps model calls and tokens across ``decide()`` calls, and caches decisions by signature.

    Mutable on purpose: one instance is shared by every break-in of a package or conversation.
    Calls are model calls (one per sample), so ``samples=5`` needs ``max_calls_per_signature >= 5``.
    ``max_tokens_total=None`` means tokens are not capped.
    """

    def __init__(
        self,
        *,
        max_calls_total: int,
        max_calls_per_signature: int = 1,
        max_tokens_total: int | None = None,
    ) -> None:
        if max_calls_total < 0 or max_calls_per_signature < 0:
            raise ValueError("call caps must be >= 0")
        if max_tokens_total is not None and max_tokens_total < 0:
            raise ValueError("max_tokens_total must be >= 0")
        self.max_calls_total = max_calls_total
        self.max_calls_per_signature = max_calls_per_signature
        self.max_tokens_total = max_tokens_total
        self.calls_total = 0
        self.tokens_total = 0
        self.calls_by_signature: dict[str, int] = {}
        self._cache: dict[str, DecideResult] = {}

    def can_spend(self, signature: str, calls: int) -> bool:
        """Whether ``calls`` more model calls for ``signature`` stay within every cap."""
        if self.calls_total + calls > self.max_calls_total:
            return False
        if self.calls_by_signature.get(signature, 0) + calls > self.max_calls_per_signature:
            return False
        return self.max_tokens_total is None or self.tokens_total < self.max_tokens_total

    def record(self, signature: str, *, calls: int, tokens: int) -> None:
        """Count what a run spent (every attempted call counts, even one that failed)."""
        self.calls_total += calls
        self.tokens_total += tokens
        self.calls_by_signature[signature] = self.calls_by_signature.get(signature, 0) + calls

    def cached(self, signature: str) -> DecideResult | None:
        """The remembered decided, non-fallback result for ``signature``, if any."""
        return self._cache.get(signature)

    def remember(self, signature: str, result: DecideResult) -> None:
        """Keep only confident decisions: a fallback must be free to try again next time."""
        if result.status == "decided" and not result.fallback:
            self._cache[signature] = result


def canonical_json(value: object) -> str:
    """Sorted keys, compact separators, UTF-8 as is: the same facts always give the same text."""
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"facts must be JSON-serialisable: {exc}") from exc


def situation_signature(
    task: str, facts: Mapping[str, object], key: Mapping[str, object] | None = None
) -> str:
    """sha256 hex of the canonical JSON of task and facts (and ``key``, what identifies the
    situation beyond what the model is shown): one key per distinct situation."""
    document: dict[str, object] = {"facts": dict(facts), "task": task}
    if key is not None:
        document["key"] = dict(key)
    text = canonical_json(document)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_config(
    allowed_actions: Sequence[DecideOption],
    default_action: DecideOption,
    min_confidence: float,
    samples: int,
    escalate_min_share: float,
) -> tuple[str, ...]:
    # These are programming mistakes, so they fail loudly at once rather than fall back.
    allowed = tuple(allowed_actions)
    if not allowed:
        raise ValueError("allowed_actions must not be empty")
    for action in (*allowed, default_action):
        if not isinstance(action, DecideOption):
            # By type, not by name: "sender_is_maria" is refused as surely as "bind_person".
            raise PersonChoiceRefused(
                f"allowed action {action!r} is not a DecideOption: a free-form option can name "
                "a person, and identity questions must only escalate "
                "(use DecideOption.ESCALATE_TO_PM)"
            )
    if len(set(allowed)) != len(allowed):
        raise ValueError("allowed_actions must be duplicate-free")
    if default_action not in allowed:
        raise ValueError(f"default_action {default_action!r} is not in allowed_actions")
    if samples < 1:
        raise ValueError("samples must be >= 1")
    if not 0.0 <= min_confidence <= 1.0:
        raise ValueError("min_confidence must be within [0, 1]")
    # A share of 0 would escalate every call, even one where no sample asked to.
    if not 0.0 < escalate_min_share <= 1.0:
        raise ValueError("escalate_min_share must be within (0, 1]")
    return allowed


def _classify(
    text: str, allowed: tuple[str, ...]
) -> _Decided | _Ambiguous | _Escalate | FailureKind:
    """One sample's text → a valid answer, or the failure kind naming what was wrong."""
    try:
        parsed: object = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return "non_json"
    try:
        answer = _answer_adapter().validate_python(parsed)
    except (ValidationError, RecursionError):
        return "schema_failure"
    # Membership is checked apart from shape so "right form, wrong choice" is visible in the log.
    if isinstance(answer, _Decided) and answer.action not in allowed:
        return "out_of_vocabulary"
    if isinstance(answer, _Ambiguous) and any(a not in allowed for a in answer.candidate_actions):
        return "out_of_vocabulary"
    return answer


def decide(
    model: DecideModel,
    *,
    task: str,
    facts: Mapping[str, object],
    allowed_actions: Sequence[DecideOption],
    min_confidence: float,
    default_action: DecideOption,
    samples: int = 1,
    escalate_min_share: float = 0.2,
    budget: DecideBudget | None = None,
    key: Mapping[str, object] | None = None,
) -> DecideResult:
    """Ask ``model`` ``samples`` times to pick one of ``allowed_actions``; aggregate by vote.

    Raises ``ValueError`` (or :class:`PersonChoiceRefused`) only for configuration mistakes and
    unserialisable facts; anything the model does at run time ends in a result. Failures dilute
    agreement: every share is over the configured ``samples``, not over the samples that parsed.

    For identity questions pass an escalate-style ``default_action``: every doubt then goes to a
    person rather than to a guessed person.

    ``key`` joins the cache signature without being shown to the model: what makes two
    situations different although their facts read the same (a work order's id and version).
    """
    allowed = _check_config(
        allowed_actions, default_action, min_confidence, samples, escalate_min_share
    )
    facts_json = canonical_json(dict(facts))
    signature = situation_signature(task, facts, key)

    def fallback(
        reason: FallbackReason, status: Status = "ambiguous", confidence: float = 0.0
    ) -> DecideResult:
        return DecideResult(
            status=status,
            action=default_action,
            confidence=confidence,
            reason=reason,
            fallback=True,
            fallback_reason=reason,
            samples_requested=samples,
            samples_valid=0,
            signature=signature,
        )

    if len(facts_json.encode("utf-8")) > MAX_FACTS_BYTES:
        return fallback("facts_too_large")

    if budget is not None:
        hit = budget.cached(signature)
        # The cache key is task + facts only, so re-check what this caller allows and demands.
        if hit is not None and hit.action in allowed and hit.confidence >= min_confidence:
            return hit.model_copy(update={"cached": True, "input_tokens": 0, "output_tokens": 0})
        if not budget.can_spend(signature, samples):
            return fallback("budget_exhausted")

    outcomes: list[_Decided | _Ambiguous | _Escalate | FailureKind] = []
    input_tokens = 0
    output_tokens = 0
    for index in range(samples):
        request = DecideRequest(
            task=task, facts_json=facts_json, allowed_actions=allowed, sample_index=index
        )
        outcome: _Decided | _Ambiguous | _Escalate | FailureKind
        try:
            reply = model(request)
            text = reply.text
            input_tokens += int(reply.input_tokens)
            output_tokens += int(reply.output_tokens)
        except Exception:  # any model or transport error is one failed sample, never a crash
            outcome = "transport_error"
        else:
            outcome = _classify(text, allowed)
        outcomes.append(outcome)

    result = _aggregate(
        outcomes,
        samples=samples,
        default_action=default_action,
        min_confidence=min_confidence,
        escalate_min_share=escalate_min_share,
        signature=signature,
        tokens=(input_tokens, output_tokens),
    )
    if budget is not None:
        budget.record(signature, calls=samples, tokens=input_tokens + output_tokens)
        budget.remember(signature, result)
    return result


_ESCALATE = "<escalate>"


def _aggregate(
    outcomes: list[_Decided | _Ambiguous | _Escalate | FailureKind],
    *,
    samples: int,
    default_action: str,
    min_confidence: float,
    escalate_min_share: float,
    signature: str,
    tokens: tuple[int, int],
) -> DecideResult:
    """Votes → one outcome, counted by the one vote engine (``maestro.domain.votes``): shares are
    over the samples drawn (all of them, here), so failures count against agreement."""
    ballots: list[Ballot] = []
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, str):
            ballots.append(Ballot(index=index, failure=outcome))
        elif isinstance(outcome, _Decided):
            reading = Reading(key=outcome.action, confidence=outcome.confidence)
            ballots.append(Ballot(index=index, readings=(reading,)))
        elif isinstance(outcome, _Ambiguous):
            ballots.append(Ballot(index=index, ambiguous=outcome.candidate_actions))
        else:
            ballots.append(Ballot(index=index, readings=(Reading(key=_ESCALATE),)))
    counted = tally(ballots)
    answers = [o for o in outcomes if not isinstance(o, str)]
    failures = counted.failures
    first_failure = next((o for o in outcomes if isinstance(o, str)), None)
    decided = [a for a in answers if isinstance(a, _Decided)]
    ambiguous = [a for a in answers if isinstance(a, _Ambiguous)]
    escalates = [a for a in answers if isinstance(a, _Escalate)]
    # Insertion order = first seen, for deterministic ties.
    votes = {
        c.key: c.support
        for c in sorted(counted.counts, key=lambda c: min(c.voters))
        if c.key != _ESCALATE
    }
    mean_self = (
        sum(a.confidence for a in decided) / len(decided) if decided else None
    )  # recorded, but secondary to the vote share when samples > 1
    top_votes = max(votes.values(), default=0)
    leaders = tuple(action for action, count in votes.items() if count == top_votes and count)

    def result(
        status: Status,
        *,
        action: str,
        confidence: float,
        fallback_reason: FallbackReason | None,
        model_reason: str | None,
        candidates: tuple[str, ...] = (),
    ) -> DecideResult:
        return DecideResult(
            status=status,
            action=action,
            confidence=confidence,
            reason=fallback_reason or model_reason or "decided",
            fallback=fallback_reason is not None,
            fallback_reason=fallback_reason,
            model_reason=model_reason,
            votes=votes,
            candidates=candidates,
            failures=failures,
            samples_requested=samples,
            samples_valid=len(answers),
            mean_self_confidence=mean_self,
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            signature=signature,
        )

    if not answers:
        # Nothing parsed: the first failure names the cause (e.g. the model was unreachable).
        return result(
            "ambiguous",
            action=default_action,
            confidence=0.0,
            fallback_reason=first_failure or "transport_error",
            model_reason=None,
        )

    escalated = counted.count(_ESCALATE)
    escalate_share = escalated.share if escalated is not None else 0.0
    if escalates and escalate_share >= escalate_min_share:
        # Recall-first: a minority asking for a human is enough.
        return result(
            "escalate",
            action=default_action,
            confidence=escalate_share,
            fallback_reason="escalate",
            model_reason=_first_reason(escalates),
        )

    if ambiguous and len(ambiguous) >= top_votes:
        union: dict[str, None] = {}
        for hedge in ambiguous:
            union.update(dict.fromkeys(hedge.candidate_actions))
        return result(
            "ambiguous",
            action=default_action,
            confidence=top_votes / samples,
            fallback_reason="ambiguous",
            model_reason=_first_reason(ambiguous),
            candidates=tuple(union),
        )

    if not leaders:
        # Only escalate answers, too few to escalate: no quorum for anything.
        return result(
            "ambiguous",
            action=default_action,
            confidence=0.0,
            fallback_reason="low_confidence",
            model_reason=_first_reason(escalates),
        )

    if len(leaders) > 1:
        # A split between readings is never settled by picking one.
        return result(
            "ambiguous",
            action=default_action,
            confidence=top_votes / samples,
            fallback_reason="ambiguous",
            model_reason=None,
            candidates=leaders,
        )

    winner = leaders[0]
    backers = [a for a in decided if a.action == winner]
    confidence = backers[0].confidence if samples == 1 else top_votes / samples
    if confidence < min_confidence:
        return result(
            "decided",
            action=default_action,
            confidence=confidence,
            fallback_reason="low_confidence",
            model_reason=_first_reason(backers),
        )
    return result(
        "decided",
        action=winner,
        confidence=confidence,
        fallback_reason=None,
        model_reason=_first_reason(backers),
    )


def _first_reason(answers: list[_Decided] | list[_Ambiguous] | list[_Escalate]) -> str | None:
    return next((a.reason for a in answers if a.reason), None)


__all__ = [
    "MAX_FACTS_BYTES",
    "BreakInBudget",
    "DecideBudget",
    "DecideModel",
    "DecideOption",
    "DecideRequest",
    "DecideResult",
    "FailureKind",
    "FallbackReason",
    "ModelReply",
    "PersonChoiceRefused",
    "Status",
    "canonical_json",
    "decide",
    "situation_signature",
]
