"""What the brain says and what maestro records: samples, pre-check, decisions, state."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Literal

from pydantic import Field, model_validator

from maestro.domain.actions import (
    Action,
    DeferredCall,
    Lane,
    ManageExisting,
    ManageExistingParams,
    is_new_ref,
    needs_the_owner,
)
from maestro.domain.common import AwareDatetime, Frozen
from maestro.domain.events import Effect
from maestro.domain.models import Channel, PreCheckResult, Route, Urgency, WoSnapshot

__all__ = ["PreCheckResult", "Route"]  # defined with the messages that carry a probe's answer

SampleFailure = Literal[
    "transport_error", "timeout", "non_json", "schema_failure", "out_of_vocabulary", "refused"
]


class BrainSample(Frozen):
    """One of the k answers the reasoning brain gave for a package.

    A failed sample keeps its place: it counts in the consensus denominator, diluting agreement.
    """

    index: int = Field(ge=0)
    actions: tuple[Action, ...] | None = None
    failure: SampleFailure | None = None
    detail: str = Field(default="", max_length=500)
    model: str = "unknown"
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _either_actions_or_failure(self) -> BrainSample:
        if (self.actions is None) == (self.failure is None):
            raise ValueError("a sample has either actions or a failure, not both or neither")
        if self.actions is not None and not self.actions:
            raise ValueError("a valid sample proposes at least one action")
        return self

    @property
    def valid(self) -> bool:
        return self.actions is not None


class Disposition(StrEnum):
    QUEUED = "queued"  # will be executed, in order
    REJECTED = "rejected"  # violated a rule (ownership, role, I7, vocabulary); not executed
    PREEMPTED = "preempted"  # an escalation took precedence; the context is kept
    BELOW_THRESHOLD = "below_threshold"  # not enough agreement; recorded, not executed
    CLOSED = "closed"  # a pending question or hold was closed (resolved, discarded, …)
    HELD = "held"  # held for the party's YES by text (a call's words): runs only when released


ContextRelation = Literal["resolves", "continues", "pivots", "ambiguous", "none"]
RevalidationOutcome = Literal["valid", "stale", "superseded"]
Stage = Literal["precheck", "resolve", "dispose", "guard", "fallback"]


class MaestroDecision(Frozen):
    """The append-only record of one routing decision (ADR-0059 D3 fields that still apply).

    ``decision_id`` is deterministic (package id + stage + index), so a re-execution writes the
    same key and the conditional put refuses the duplicate.
    """

    decision_id: str
    package_id: str
    conversation_id: str
    stage: Stage
    index: int = Field(ge=0)
    disposition: Disposition
    lane: Lane
    target_wo_id: str | None = None
    command: Action | None = Field(default=None, description="What the brain proposed")
    context_relation: ContextRelation = "none"
    open_context_count: int = Field(ge=0)
    bound_context_id: str | None = None
    interrupted: bool = False
    resume_revalidated: bool = False
    revalidation: RevalidationOutcome | None = Field(
        default=None, description="What re-validating the resumed context or hold found (I6)"
    )
    abstained: bool = False
    fallback: bool = False
    asks: str | None = Field(
        default=None, description="The question this decision puts to the party (guard signal)"
    )
    confidence: float = Field(ge=0.0, le=1.0)
    threshold: float | None = None
    votes: dict[str, int] = Field(default_factory=dict)
    samples: int = Field(default=0, ge=0)
    valid_samples: int = Field(default=0, ge=0)
    entropy_bits: float = Field(default=0.0, ge=0.0)
    model: str = ""
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    reason: str = Field(default="", max_length=500)
    idempotency_key: str | None = None
    recorded_at: AwareDatetime


OutcomeStatus = Literal["done", "failed", "skipped"]


class ActionOutcomeRecord(Frozen):
    """What became of one queued action, appended to the decision log as it happens.

    Decisions are written ahead (before any action runs); each action then appends its outcome,
    and persist or fail-open complete the record, so every effect has a decision and every
    decision says what happened. ``record_id`` is deterministic: a re-run appends nothing new.
    """

    record_id: str
    package_id: str
    conversation_id: str
    index: int = Field(ge=0)
    decision_id: str
    lane: Lane
    status: OutcomeStatus
    target_wo_id: str | None = None
    created_wo_id: str | None = None
    message_sids: tuple[str, ...] = ()
    effects: tuple[Effect, ...] = Field(
        default=(),
        description="What the action wrote, as the code that wrote it recorded it: the sweeper "
        "expects an event claiming each one",
    )
    note: str = Field(default="", max_length=500)
    unsent: tuple[str, ...] = Field(
        default=(),
        description="Messages the action did not send because a daily cap refused them, each "
        "with why: recorded here, claimed by no event",
    )
    folded_into: str | None = Field(
        default=None,
        description="A repeat emergency from an unknown number: the SID of the page it folded "
        "into (no new page, no new safety text)",
    )
    folded_at: AwareDatetime | None = Field(default=None, description="When that page went")
    recorded_at: AwareDatetime


def outcome_record_prefix(package_id: str) -> str:
    """What every outcome line's id of the package begins with (a key condition reads them
    alone)."""
    return f"{package_id}#outcome#"


def outcome_record_id(package_id: str, index: int) -> str:
    return f"{outcome_record_prefix(package_id)}{index:03d}"


class PackageCompletion(Frozen):
    """The last line of a package's record: how it ended and who closed it."""

    record_id: str
    package_id: str
    conversation_id: str
    route: str
    completed_by: Literal["persist", "fail_open"]
    decisions: int = Field(ge=0)
    outcomes: dict[str, int] = Field(default_factory=dict, description="status → count")
    effects: tuple[Effect, ...] = Field(
        default=(),
        description="What fail-open wrote itself (its page, the safety advice), recorded before "
        "its events go: the sweeper expects an event of fail-open's decision claiming each one",
    )
    reason: str = Field(default="", max_length=500)
    recorded_at: AwareDatetime


UNSHARDED_GRACE = timedelta(days=1)
"""How long past the first sweep mark the sweeper still reads the completions index's unsharded
day partitions: longer than any step that started before sharding could still write one."""


class SweepMark(Frozen):
    """Where the sweeper stopped: the last completion it swept. Completions are swept in the
    order of the completions index (the time recorded, then the package id), so every one
    after the mark is still to sweep and none before it is read again."""

    recorded_at: AwareDatetime
    package_id: str
    since: AwareDatetime | None = Field(
        default=None,
        description="When the first mark was made (the first sweep since the completions "
        "index was sharded): every line written unsharded is older than a day past it",
    )

    @classmethod
    def of(cls, completion: PackageCompletion, since: datetime | None = None) -> SweepMark:
        return cls(
            recorded_at=completion.recorded_at, package_id=completion.package_id, since=since
        )

    def reads_unsharded(self) -> bool:
        """Whether lines past the mark may still be in a day's unsharded partition (written
        before sharding): until a day past the first mark, then never again."""
        return self.since is None or self.recorded_at < self.since + UNSHARDED_GRACE

    def passed(self, completion: PackageCompletion) -> bool:
        """True when ``completion`` is at or before the mark (swept already)."""
        return (completion.recorded_at, completion.package_id) <= (
            self.recorded_at,
            self.package_id,
        )


def completion_record_id(package_id: str) -> str:
    return f"{package_id}#completed"


def fallback_decision_id(package_id: str) -> str:
    """The decision fail-open records: the package's deterministic default."""
    return f"{package_id}#fallback#0"


class OutstandingItem(Frozen):
    kind: Literal[
        "availability", "rating", "clarification", "confirmation", "vendor_reply", "answer"
    ]
    since: AwareDatetime
    note: str = ""
    asked_about: WoSnapshot | None = Field(default=None, description="The WO when asked")


class MaestroState(Frozen):
    """A WO-keyed snapshot derived from the decision log: a routing aid, never the source of
    truth, reconciled against the WO store. Updated with optimistic concurrency on ``version``.
    """

    wo_id: str
    version: int = Field(default=1, ge=1)
    urgency: Urgency = Urgency.ROUTINE
    outstanding: tuple[OutstandingItem, ...] = ()
    last_package_id: str | None = None
    last_decision_id: str | None = None
    interrupted_by: str | None = Field(
        default=None, description="The escalating package that interrupted this WO's thread"
    )
    interrupted_at: AwareDatetime | None = None
    updated_at: AwareDatetime


DEFAULT_PENDING_TTL = timedelta(hours=72)

PendingStatus = Literal["open", "resolved", "discarded", "expired", "superseded"]
"""A clarification's life: open until its answer resolves it, the party drops it (a new topic
does not: it expires), a newer question supersedes it, or its TTL passes."""

HoldStatus = Literal["held", "released", "discarded", "expired", "superseded"]
"""A held confirmation's life: held until a re-validated YES releases it exactly as held, a "no"
or a new topic discards it, a newer hold supersedes it, or its TTL passes."""

CLOSED_CLARIFICATION: frozenset[str] = frozenset({"resolved", "discarded", "expired", "superseded"})
CLOSED_HOLD: frozenset[str] = frozenset({"released", "discarded", "expired", "superseded"})


class PendingClarification(Frozen):
    """A question maestro asked, stored so "1", "the kitchen one" or "both" resolves next time.

    It keeps what the question deferred: the package's own words and the readings withheld
    (one per candidate, when the brain proposed them), replayed on the chosen work order(s); and
    each candidate as it was when asked, so the answer is re-validated before it acts (I6).
    """

    clarification_id: str
    package_id: str
    conversation_id: str
    party_id: str | None
    question: str
    candidate_ids: tuple[str, ...]
    candidate_lines: tuple[str, ...] = ()
    candidate_snapshots: tuple[WoSnapshot, ...] = Field(
        default=(), description="Each candidate work order as it was when asked"
    )
    deferred_text: str = Field(default="", description="The words the question put on hold")
    deferred: tuple[Action, ...] = Field(default=(), description="Readings withheld, by target")
    call: DeferredCall | None = Field(
        default=None, description="The command it asks about, run on the work orders picked"
    )
    asked_at: AwareDatetime
    expires_at: AwareDatetime
    status: PendingStatus = "open"
    closed_by: str | None = Field(default=None, description="The package that closed it")
    by_unverified_call: bool = Field(
        default=False,
        description="The words it defers came by a call nothing vouches for: what they ask to "
        "change is held for a YES by text, whoever picks the work order",
    )

    @model_validator(mode="after")
    def _lines_match(self) -> PendingClarification:
        if self.candidate_lines and len(self.candidate_lines) != len(self.candidate_ids):
            raise ValueError("one description line per candidate, or none")
        return self

    @property
    def is_open(self) -> bool:
        return self.status == "open"


class PendingConfirmation(Frozen):
    """A held mutation: the exact call with resolved ids, released only by YES, re-validated
    before release, and never re-derived from the "yes".

    It holds one of two things, through the same rules: ``call``, a cancel or reschedule the
    manage lane held as the party asked it; or ``held``, the exact actions dispose decided for
    a package whose words came by a call no attestation vouches for (a new request and its visit,
    a note for the vendor, a rating, a cancel), released in order, exactly as held, on a YES.

    ``options`` are the work orders the party saw numbered (the hold may be a narrowing of them:
    "1" then picks WO-204 alone); ``wo_snapshots`` are the held WOs as they were when held.
    ``asked_on`` is where the party was asked (maestro asks by text): only an answer on that
    channel, or a call whose caller ID attestation A vouches for, releases it.
    """

    confirmation_id: str
    package_id: str
    conversation_id: str = ""
    party_id: str
    call: ManageExistingParams | None = None
    held: tuple[Action, ...] = Field(
        default=(), max_length=8, description="The exact actions held, in the order they run"
    )
    proposal: str = Field(min_length=1, max_length=500, description="What the party was asked")
    options: tuple[str, ...] = ()
    option_lines: tuple[str, ...] = ()
    wo_snapshots: tuple[WoSnapshot, ...] = Field(
        default=(), description="Each held work order as it was when held"
    )
    asked_on: Channel = Field(
        default=Channel.SMS, description="The channel the question went out on"
    )
    by_unverified_call: bool = Field(
        default=False,
        description="Asked for by a call whose caller ID nothing vouches for (the text says so)",
    )
    held_at: AwareDatetime
    expires_at: AwareDatetime
    status: HoldStatus = "held"
    closed_by: str | None = None

    @model_validator(mode="after")
    def _mutating_call(self) -> PendingConfirmation:
        if (self.call is None) == (not self.held):
            raise ValueError("a hold holds either a manage call or actions")
        if self.call is not None and self.call.operation == "list":
            raise ValueError("only mutating calls are held for confirmation")
        if self.call is not None and not self.call.wo_ids:
            raise ValueError("a held call names the resolved work-order ids")
        if any(not needs_the_owner(action) for action in self.held):
            raise ValueError("only actions that change something are held for confirmation")
        if self.option_lines and len(self.option_lines) != len(self.options):
            raise ValueError("one line per option, or none")
        return self

    @property
    def is_open(self) -> bool:
        return self.status == "held"

    @property
    def operation(self) -> str:
        """What it holds, in a word: the call's operation, else the held lanes in order."""
        if self.call is not None:
            return self.call.operation
        return "+".join(
            a.params.operation if isinstance(a, ManageExisting) else a.lane for a in self.held
        )

    @property
    def wo_ids(self) -> tuple[str, ...]:
        """The existing work orders it would change, in order (a new one has no id yet)."""
        if self.call is not None:
            return self.call.wo_ids
        ids: list[str] = []
        for action in self.held:
            named = (
                action.params.wo_ids
                if isinstance(action, ManageExisting)
                else (action.target_wo_id,)
            )
            ids.extend(i for i in named if i is not None and not is_new_ref(i))
        return tuple(dict.fromkeys(ids))

    @property
    def choices(self) -> tuple[str, ...]:
        """What a number in the answer counts through: the options shown, else the held call's
        ids (held actions are confirmed or not as a whole: a number picks nothing among them)."""
        return self.options or (self.call.wo_ids if self.call is not None else ())
