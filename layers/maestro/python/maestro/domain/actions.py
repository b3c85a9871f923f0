"""The closed action vocabulary: nine lanes the brain may propose, each with typed params, and
one internal lane only the deterministic layer queues.

The brain may only say one of the nine (:data:`ProposedAction`, the model's tool schema); anything
else is a schema failure and falls back. An action names *what* to do and *which* work order; it
never names a handler, a person or a free-form effect, so a prompt injection cannot widen what
the system does. ``answer_wait`` (a vendor's answer to their open offer, a PM's to an approval:
``maestro.domain.wait_answers``) is queued by resolve alone and is never in the model's schema:
a model that names it fails validation like any lane outside the vocabulary.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from maestro.domain.common import AwareDatetime, Frozen
from maestro.domain.tool_schema import compact_schema


class Lane(StrEnum):
    CREATE_WO = "create_wo"
    RELAY_TO_OPEN_WO = "relay_to_open_wo"
    SCHEDULE_VISIT = "schedule_visit"
    RECORD_RATING = "record_rating"
    RELAY_TO_VENDOR = "relay_to_vendor"
    MANAGE_EXISTING = "manage_existing"
    CONTINUE_WITH_ASSISTANT = "continue_with_assistant"
    CLARIFY = "clarify"
    ESCALATE = "escalate"
    ANSWER_WAIT = "answer_wait"


INTERNAL_LANES: frozenset[Lane] = frozenset({Lane.ANSWER_WAIT})
"""Lanes only the deterministic layer queues (resolve): never offered to, or accepted from, a
model."""
PROPOSABLE_LANES: frozenset[Lane] = frozenset(set(Lane) - INTERNAL_LANES)


class Mutation(StrEnum):
    """How a lane touches the world; it decides the lane's consensus threshold class."""

    WRITES = "writes"  # changes a work order
    MESSAGES = "messages"  # sends words to a third party on the tenant's behalf
    VIA_CONFIRM = "via_confirm"  # mutations are held until the party says YES
    NONE = "none"
    PAGES = "pages"  # wakes a person up


class LaneSpec(Frozen):
    lane: Lane
    mutation: Mutation
    target: Literal["required", "forbidden", "optional"]
    event: str = Field(description="The domain event the lane's effect publishes")

    @property
    def mutating(self) -> bool:
        """Mutating lanes need high agreement and an owned target."""
        return self.mutation in {Mutation.WRITES, Mutation.MESSAGES}


LANE_SPECS: dict[Lane, LaneSpec] = {
    spec.lane: spec
    for spec in (
        LaneSpec(
            lane=Lane.CREATE_WO, mutation=Mutation.WRITES, target="forbidden", event="wo.created"
        ),
        LaneSpec(
            lane=Lane.RELAY_TO_OPEN_WO,
            mutation=Mutation.WRITES,
            target="required",
            event="wo.updated",
        ),
        LaneSpec(
            lane=Lane.SCHEDULE_VISIT,
            mutation=Mutation.WRITES,
            target="required",
            event="wo.updated",
        ),
        LaneSpec(
            lane=Lane.RECORD_RATING,
            mutation=Mutation.WRITES,
            target="required",
            event="rating.recorded",
        ),
        LaneSpec(
            lane=Lane.RELAY_TO_VENDOR,
            mutation=Mutation.MESSAGES,
            target="required",
            event="message.sent",
        ),
        LaneSpec(
            lane=Lane.MANAGE_EXISTING,
            mutation=Mutation.VIA_CONFIRM,
            target="forbidden",
            event="confirm.held",
        ),
        LaneSpec(
            lane=Lane.CONTINUE_WITH_ASSISTANT,
            mutation=Mutation.NONE,
            target="optional",
            event="message.sent",
        ),
        LaneSpec(
            lane=Lane.CLARIFY, mutation=Mutation.NONE, target="forbidden", event="message.sent"
        ),
        LaneSpec(
            lane=Lane.ESCALATE, mutation=Mutation.PAGES, target="optional", event="escalation.paged"
        ),
        # Completes a WO execution's wait (SendTaskSuccess) and tells the party; the dispatch
        # run's own steps write the outcome and publish the wo.* events.
        LaneSpec(
            lane=Lane.ANSWER_WAIT,
            mutation=Mutation.WRITES,
            target="optional",
            event="message.sent",
        ),
    )
}

MUTATING_LANES: frozenset[Lane] = frozenset(
    s.lane for s in LANE_SPECS.values() if s.mutating and s.lane in PROPOSABLE_LANES
)
"""The proposed lanes whose verdicts need high agreement (an internal lane is no verdict)."""

OWNER_ONLY: frozenset[Mutation] = frozenset(
    {Mutation.WRITES, Mutation.MESSAGES, Mutation.VIA_CONFIRM}
)
"""What changes something in the party's name: a work-order write, words passed to someone else
as theirs, a cancel or a reschedule. Only the number's owner may ask for it: a call whose caller
ID nothing vouches for cannot (``needs_the_owner``)."""

NEW_WO_PREFIX = "new:"
"""Targets spelled ``new:<ref>`` point at a work order a ``create_wo`` earlier in the same
package opens; dispose orders the create first and resolves the ref when it runs."""

_NEW_REF = re.compile(r"^new:[a-z0-9][a-z0-9-]{0,31}$")


def is_new_ref(target: str | None) -> bool:
    return target is not None and target.startswith(NEW_WO_PREFIX)


# ---------------------------------------------------------------------------------------------
# Params, one model per lane. Closed (extra fields forbidden) and bounded in size, because they
# come from a model and end up in messages and records.
# ---------------------------------------------------------------------------------------------


class Params(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


Category = Literal[
    "plumbing", "electrical", "hvac", "appliance", "pest", "structural", "locks", "general"
]


class CreateWoParams(Params):
    ref: str = Field(default="new:1", description="How later actions in this package refer to it")
    summary: str = Field(min_length=3, max_length=200)
    category: Category = "general"
    urgency: Literal["routine", "urgent", "emergency"] = "routine"
    location: str | None = Field(default=None, max_length=100)

    @field_validator("ref")
    @classmethod
    def _ref_shape(cls, value: str) -> str:
        if not _NEW_REF.fullmatch(value):
            raise ValueError("ref must look like 'new:1'")
        return value


class RelayToOpenWoParams(Params):
    note: str = Field(min_length=1, max_length=1000, description="What to add to the WO")


class ScheduleVisitParams(Params):
    mode: Literal["propose", "confirm"] = "propose"
    availability: str = Field(min_length=1, max_length=300, description="In the sender's words")
    window_start: AwareDatetime | None = None
    window_end: AwareDatetime | None = None

    @model_validator(mode="after")
    def _window_pair(self) -> ScheduleVisitParams:
        if (self.window_start is None) != (self.window_end is None):
            raise ValueError("give both window_start and window_end, or neither")
        if self.window_start and self.window_end and self.window_end <= self.window_start:
            raise ValueError("window_end must be after window_start")
        return self


class RecordRatingParams(Params):
    stars: int = Field(ge=1, le=5)
    comment: str | None = Field(default=None, max_length=500)


class RelayToVendorParams(Params):
    message: str = Field(min_length=1, max_length=1000)


class ManageExistingParams(Params):
    operation: Literal["list", "cancel", "reschedule", "complete"] = Field(
        description="complete: a vendor reports their job done; a tenant confirms a "
        "reported one; a PM closes one"
    )
    wo_ids: tuple[str, ...] = Field(default=(), max_length=20)
    request: str = Field(default="", max_length=300, description="The party's words")


class ContinueWithAssistantParams(Params):
    reply_hint: str | None = Field(default=None, max_length=500)


class DeferredCall(Params):
    """The command a question defers: run on the work orders the answer picks (a cancel, a
    reschedule or a PM's close is then held for a YES, seed 004; a vendor's ``complete`` reports
    the picked jobs finished)."""

    operation: Literal["cancel", "reschedule", "rate", "relay", "complete"]
    request: str = Field(default="", max_length=300, description="The party's words")
    stars: int | None = Field(default=None, ge=1, le=5)

    @model_validator(mode="after")
    def _stars_for_a_rating(self) -> DeferredCall:
        if (self.operation == "rate") != (self.stars is not None):
            raise ValueError("stars go with a rate, and only with a rate")
        return self


class ClarifyParams(Params):
    question: str = Field(min_length=1, max_length=400)
    candidate_ids: tuple[str, ...] = Field(default=(), max_length=10)
    call: DeferredCall | None = Field(default=None, description="A command asked about")
    reason: Literal[
        "ambiguous_relation",
        "multi_context",
        "low_agreement",
        "stale_context",
        "not_owned",
        "unresolved_reference",
    ] = "ambiguous_relation"


class AnswerWaitParams(Params):
    kind: Literal["offer", "approval"]
    answer: Literal["accept", "decline", "approve", "refuse", "unclear"] = Field(
        description="unclear: ask again (naming the work orders when several are open)"
    )
    offer_index: int | None = Field(default=None, ge=1, le=3, description="For an offer")
    candidates: tuple[str, ...] = Field(
        default=(), max_length=10, description="For an unclear answer: the open waits' WOs"
    )


class EscalateParams(Params):
    reason: Literal["emergency", "identity", "guard_tripped", "fallback"] = "emergency"
    severity: Literal["emergency", "urgent", "info"] = "emergency"
    hazard: str = Field(default="", max_length=200)


# ---------------------------------------------------------------------------------------------
# Actions: the discriminated union by lane.
# ---------------------------------------------------------------------------------------------


class ActionBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    target_wo_id: str | None = Field(default=None, max_length=64)
    confidence: float = Field(default=0.5, ge=0.0, le=1.0, description="Self-reported")
    why: str = Field(default="", max_length=400)
    evidence: str = Field(default="", max_length=400, description="The words it rests on")

    @property
    def spec(self) -> LaneSpec:
        return LANE_SPECS[Lane(self.lane)]  # type: ignore[attr-defined]

    @model_validator(mode="after")
    def _target_matches_lane(self) -> ActionBase:
        rule = self.spec.target
        if rule == "required" and not self.target_wo_id:
            raise ValueError(f"{self.spec.lane} needs a target_wo_id")
        if rule == "forbidden" and self.target_wo_id is not None:
            raise ValueError(f"{self.spec.lane} takes no target_wo_id")
        target = self.target_wo_id
        if (
            target is not None
            and target.startswith(NEW_WO_PREFIX)
            and not _NEW_REF.fullmatch(target)
        ):
            raise ValueError("a new-WO target must look like 'new:1'")
        return self


class CreateWo(ActionBase):
    lane: Literal[Lane.CREATE_WO] = Lane.CREATE_WO
    params: CreateWoParams


class RelayToOpenWo(ActionBase):
    lane: Literal[Lane.RELAY_TO_OPEN_WO] = Lane.RELAY_TO_OPEN_WO
    params: RelayToOpenWoParams


class ScheduleVisit(ActionBase):
    lane: Literal[Lane.SCHEDULE_VISIT] = Lane.SCHEDULE_VISIT
    params: ScheduleVisitParams


class RecordRating(ActionBase):
    lane: Literal[Lane.RECORD_RATING] = Lane.RECORD_RATING
    params: RecordRatingParams


class RelayToVendor(ActionBase):
    lane: Literal[Lane.RELAY_TO_VENDOR] = Lane.RELAY_TO_VENDOR
    params: RelayToVendorParams


class ManageExisting(ActionBase):
    lane: Literal[Lane.MANAGE_EXISTING] = Lane.MANAGE_EXISTING
    params: ManageExistingParams


class ContinueWithAssistant(ActionBase):
    lane: Literal[Lane.CONTINUE_WITH_ASSISTANT] = Lane.CONTINUE_WITH_ASSISTANT
    params: ContinueWithAssistantParams = ContinueWithAssistantParams()


class Clarify(ActionBase):
    lane: Literal[Lane.CLARIFY] = Lane.CLARIFY
    params: ClarifyParams


class Escalate(ActionBase):
    lane: Literal[Lane.ESCALATE] = Lane.ESCALATE
    params: EscalateParams = EscalateParams()


class AnswerWait(ActionBase):
    """Internal: the answer to a WO execution's wait (never proposed by a model)."""

    lane: Literal[Lane.ANSWER_WAIT] = Lane.ANSWER_WAIT
    params: AnswerWaitParams


ProposedAction = Annotated[
    CreateWo
    | RelayToOpenWo
    | ScheduleVisit
    | RecordRating
    | RelayToVendor
    | ManageExisting
    | ContinueWithAssistant
    | Clarify
    | Escalate,
    Field(discriminator="lane"),
]
"""What a model may propose: the nine lanes."""

Action = Annotated[
    CreateWo
    | RelayToOpenWo
    | ScheduleVisit
    | RecordRating
    | RelayToVendor
    | ManageExisting
    | ContinueWithAssistant
    | Clarify
    | Escalate
    | AnswerWait,
    Field(discriminator="lane"),
]
"""Any queued action: a proposed one, or one only the deterministic layer queues."""


@cache
def _action_adapter() -> TypeAdapter[ProposedAction]:
    # Built on first use, not at import: most handlers import the vocabulary, few parse actions.
    return TypeAdapter(ProposedAction)


class ActionPlan(BaseModel):
    """What one brain sample proposes: an ordered list of actions for the package."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    actions: tuple[ProposedAction, ...] = Field(min_length=1, max_length=8)


def needs_the_owner(action: ActionBase) -> bool:
    """Whether ``action`` changes something in the party's name (``OWNER_ONLY``); listing one's
    requests does not."""
    if isinstance(action, ManageExisting):
        return action.params.operation != "list"
    if isinstance(action, AnswerWait):
        # Resolve reads a wait's answer only from a text (a call's "yes" is asked again by
        # text), and the lane checks it again: nothing to hold for the owner here.
        return False
    return action.spec.mutation in OWNER_ONLY


def parse_action(data: Any) -> ProposedAction:
    """Validate one proposed action from untrusted data (the model's vocabulary: an internal
    lane does not validate); raises pydantic.ValidationError if invalid."""
    return _action_adapter().validate_python(data)


def action_plan_json_schema() -> dict[str, Any]:
    """The JSON schema of an :class:`ActionPlan`, for use as a model tool's ``input_schema``.

    It is the closed vocabulary as the model sees it: a lane outside it does not validate.
    """
    return ActionPlan.model_json_schema(mode="validation")


def action_plan_tool_schema() -> dict[str, Any]:
    """:func:`action_plan_json_schema` as the brain's tool sends it: the same constraints in
    about half the characters (:func:`~maestro.domain.tool_schema.compact_schema`), each
    action's ``lane`` first and required (the parser needs it to pick the action's model)."""
    schema = compact_schema(action_plan_json_schema())
    for variant in schema["properties"]["actions"]["items"]["oneOf"]:
        fields = variant["properties"]
        variant["properties"] = {"lane": fields.pop("lane"), **fields}
        variant["required"] = ["lane", *variant.get("required", ())]
    return schema
