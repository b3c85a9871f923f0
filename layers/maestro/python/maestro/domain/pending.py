"""Pending items across packages: what a package answers before the brain reads it.

A package may answer something maestro left open: a held confirmation ("Reply YES to cancel
…") or a clarification ("which one do you mean? 1) … 2) …"). It is matched against those first,
deterministically, with the stored candidates and the exact held call, never re-parsed from the
question's text:

- a hold: YES → re-validate → release exactly the held call (or the held actions, in order); a
  pick among the options shown → hold that instead (a narrowing: "1", "the kitchen one", "all of
  them"); "no" → discarded; an unclear answer ("ok", "sounds good") → asked again; anything else
  (a new topic) → discarded, and the package goes on to the brain. A YES counts only on the
  channel the question was asked on (maestro asks by text), or from a call whose caller ID
  STIR/SHAKEN attestation A vouches for: a call's "yes" on caller ID alone releases nothing, and
  the party is asked again by text;
- a clarification: a pick (ordinal, id, words, "both" / "all of them", several at once, "all
  but the kitchen one", "something new") → re-validate the chosen work orders → run the command
  the question deferred on them (a cancel, reschedule or complete of all the valid ones as one
  call: held for a YES, a vendor's report run at once; a rating; a note), else replay the
  deferred reading (the original words, or the reading the brain proposed for that target) on
  each valid one. Words that are a command are
  never replayed as a note: they are held as the command. An unclear answer → asked again,
  naming the candidates, the command still deferred; a new topic → left open (it expires) and
  the package goes to the brain;
- an item past its TTL is closed as expired, on the record.

At most one item is open per party at a time (a new question or hold supersedes the others), but
the rules hold for several: the newest hold first, then the newest question.

Pure: the pipeline reads the items and the work orders, and plugs a judge into re-validation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Literal

from pydantic import Field

from maestro.domain.actions import (
    Action,
    Clarify,
    ClarifyParams,
    ContinueWithAssistant,
    ContinueWithAssistantParams,
    CreateWo,
    CreateWoParams,
    DeferredCall,
    ManageExisting,
    ManageExistingParams,
    RecordRating,
    RecordRatingParams,
    RelayToOpenWo,
    RelayToOpenWoParams,
    RelayToVendor,
    ScheduleVisit,
    is_new_ref,
)
from maestro.domain.answers import NEW_CANDIDATE, AnswerKind, read_answer, read_confirmation
from maestro.domain.commands import command_in, nothing_done
from maestro.domain.common import Frozen, truncate
from maestro.domain.completion import which_done
from maestro.domain.fixed_texts import (
    HOLD_EXPIRED,
    LEFT_AS_IS_MANY,
    LEFT_AS_IS_ONE,
    NONE_OF_THEM,
    NOT_ACTED_CHANGED,
    NOTHING_DONE,
    NOTHING_TO_CONFIRM,
    TO_BE_SURE,
    WHICH_AGAIN,
    WHICH_AGAIN_ONE,
    YES_BY_CALL,
    YES_IN_APP,
    Texts,
)
from maestro.domain.fixed_texts import say as worded
from maestro.domain.language import language_for
from maestro.domain.models import Channel, Package, Party, PartyRole, WorkOrder, WoSnapshot
from maestro.domain.records import (
    PendingClarification,
    PendingConfirmation,
    RevalidationOutcome,
)
from maestro.domain.revalidate import Judge, Revalidation, Target, revalidate, stale_by_default

__all__ = [
    "PendingSnapshot",
    "PendingTransition",
    "Resolution",
    "ResolvedAction",
    "resolve_pending",
]

PendingKind = Literal["clarification", "confirmation"]
AnswerJudge = Callable[[str, Sequence[str], str], bool]
"""(question, candidate lines, text) → whether the text is about the question."""


class PendingSnapshot(Frozen):
    """The party's open items, as the lease step read them (expired ones included)."""

    clarifications: tuple[PendingClarification, ...] = ()
    confirmations: tuple[PendingConfirmation, ...] = ()

    @property
    def any_open(self) -> bool:
        return bool(self.clarifications or self.confirmations)


class ResolvedAction(Frozen):
    """An action the answer calls for, with what its lane needs beyond the action itself."""

    action: Action
    pending_id: str | None = Field(default=None, description="The question or hold it answers")
    release: bool = Field(default=False, description="Releases the held call exactly as held")
    revalidation: RevalidationOutcome | None = None
    say: str = Field(default="", max_length=300, description="Said first: what changed")
    deferred_text: str = ""
    deferred: tuple[Action, ...] = ()
    options: tuple[str, ...] = ()
    held: tuple[Action, ...] = Field(
        default=(), description="For a hold of actions asked again: the actions it holds"
    )
    by_unverified_call: bool = Field(
        default=False, description="What it asks about came by a call nothing vouches for"
    )


class PendingTransition(Frozen):
    kind: PendingKind
    pending_id: str
    expected: str
    to: Literal["resolved", "discarded", "expired", "superseded"]
    reason: str = Field(default="", max_length=300)


class Resolution(Frozen):
    """What the package did to the open items, and whether the brain still needs to read it."""

    route: Literal["answered", "handback", "brain"]
    kind: Literal["none", "clarification", "confirmation", "wait"] = Field(
        default="none", description="wait: an open offer or approval (maestro.domain.wait_answers)"
    )
    pending_id: str | None = None
    answer: AnswerKind | None = None
    actions: tuple[ResolvedAction, ...] = ()
    transitions: tuple[PendingTransition, ...] = ()
    revalidation: Revalidation | None = None
    reason: str = Field(default="", max_length=500)
    by_unverified_call: bool = Field(
        default=False,
        description="The words a question deferred came by a call nothing vouches for: what "
        "they ask to change is held for a YES by text",
    )


def resolve_pending(
    package: Package,
    sender: Party | None,
    pending: PendingSnapshot,
    work_orders: Mapping[str, WorkOrder],
    interrupted: Mapping[str, datetime],
    now: datetime,
    *,
    handback: bool = False,
    judge: Judge = stale_by_default,
    answers_question: AnswerJudge | None = None,
    completion_asked: bool = False,
) -> Resolution:
    """Match ``package`` against ``pending`` (see the module docstring). ``answers_question``
    settles what the rules read as an unclear answer: still about the question (ask again) or a
    new topic (the brain reads it); without it, it is asked again. ``completion_asked``: the
    sender is a tenant asked whether a job its vendor reported finished holds up ("Reply YES,
    or tell us what's still wrong"), a question no pending item stores: with no hold or
    question of theirs open, their yes, thanks or ok answers it, so the brain reads it (never
    "nothing is waiting for your yes", never a handback)."""
    transitions: list[PendingTransition] = []
    holds = sorted(pending.confirmations, key=lambda h: (h.held_at, h.confirmation_id))
    questions = sorted(pending.clarifications, key=lambda q: (q.asked_at, q.clarification_id))
    live_holds: list[PendingConfirmation] = []
    live_questions: list[PendingClarification] = []
    for hold in holds:
        if hold.expires_at <= now:
            transitions.append(_close("confirmation", hold.confirmation_id, "held", "expired"))
        else:
            live_holds.append(hold)
    for question in questions:
        if question.expires_at <= now:
            transitions.append(
                _close("clarification", question.clarification_id, "open", "expired")
            )
        else:
            live_questions.append(question)
    # One open item at a time: a newer one supersedes the older (normally already closed).
    for hold in live_holds[:-1]:
        transitions.append(_close("confirmation", hold.confirmation_id, "held", "superseded"))
    for question in live_questions[:-1]:
        transitions.append(_close("clarification", question.clarification_id, "open", "superseded"))
    otherwise: Literal["handback", "brain"] = (
        "handback" if handback and not completion_asked else "brain"
    )
    if sender is None:
        return Resolution(route=otherwise, transitions=tuple(transitions))
    text = " ".join(package.text.split())

    if live_holds:
        return _answer_hold(
            live_holds[-1], text, sender, work_orders, interrupted, transitions, judge, package
        )
    if live_questions:
        return _answer_question(
            live_questions[-1],
            text,
            sender,
            work_orders,
            interrupted,
            transitions,
            judge,
            package,
            answers_question,
        )
    if read_confirmation(text, ()).kind == "yes" and not completion_asked:
        return _yes_to_nothing(text, sender, transitions)
    return Resolution(route=otherwise, transitions=tuple(transitions))


def _yes_to_nothing(text: str, sender: Party, transitions: list[PendingTransition]) -> Resolution:
    """A bare YES with no hold open to take it: nothing is released, and the party is told why
    (the hold expired, or nothing asks for a yes) and what to do, never "I'm on it"."""
    expired = next(
        (t.pending_id for t in transitions if t.kind == "confirmation" and t.to == "expired"),
        None,
    )
    told = worded(
        HOLD_EXPIRED if expired else NOTHING_TO_CONFIRM, language_for(sender.language, text)
    )
    return Resolution(
        route="answered",
        kind="confirmation" if expired else "none",
        pending_id=expired,
        answer="yes",
        actions=(
            ResolvedAction(
                action=ContinueWithAssistant(
                    confidence=1.0,
                    why="a yes with no hold open to take it",
                    params=ContinueWithAssistantParams(reply_hint=told),
                ),
                pending_id=expired,
            ),
        ),
        transitions=tuple(transitions),
        reason=f"a yes to {expired}, which had expired: nothing released"
        if expired
        else "a yes with nothing open to confirm: nothing released",
    )


# -- holds ---------------------------------------------------------------------------------------


def _answer_hold(
    hold: PendingConfirmation,
    text: str,
    sender: Party,
    work_orders: Mapping[str, WorkOrder],
    interrupted: Mapping[str, datetime],
    transitions: list[PendingTransition],
    judge: Judge,
    package: Package,
) -> Resolution:
    answer = read_confirmation(text, hold.choices, hold.option_lines)
    if answer.kind == "pick" and hold.call is None:
        # Held actions are confirmed as a whole: a number picks nothing among them.
        answer = answer.model_copy(update={"kind": "unclear", "why": "a pick, but none offered"})
    common = {"kind": "confirmation", "pending_id": hold.confirmation_id, "answer": answer.kind}

    language = language_for(sender.language, text)
    if answer.kind == "no":
        transitions.append(_close("confirmation", hold.confirmation_id, "held", "discarded", "no"))
        if hold.call is not None:
            one = len(hold.wo_ids) == 1
            reply = worded(
                LEFT_AS_IS_ONE if one else LEFT_AS_IS_MANY,
                language,
                wo_ids=_ids(hold.wo_ids, "and" if language == "en" else "y"),
            )
        else:
            reply = worded(NOTHING_DONE, language)
        return Resolution(
            route="answered",
            actions=(_reply(reply, hold.confirmation_id),),
            transitions=tuple(transitions),
            reason=f"{hold.confirmation_id}: the party said no; discarded",
            **common,  # type: ignore[arg-type]
        )

    if answer.kind == "other":
        transitions.append(
            _close("confirmation", hold.confirmation_id, "held", "discarded", "a new topic")
        )
        return Resolution(
            route="brain",
            transitions=tuple(transitions),
            reason=f"{hold.confirmation_id}: not an answer to the hold (a new topic); discarded",
            **common,  # type: ignore[arg-type]
        )

    if answer.kind == "unclear":
        # Asked again (the guard breaks in if it keeps coming back): never taken for a yes.
        return Resolution(
            route="answered",
            actions=(_ask_again(hold, say=worded(TO_BE_SURE, language)),),
            transitions=tuple(transitions),
            reason=f"{hold.confirmation_id}: '{truncate(text, 60)}' is not a clear yes or no",
            **common,  # type: ignore[arg-type]
        )

    if answer.kind == "pick":
        call = hold.call
        assert call is not None  # a hold of actions offers no pick (above)
        chosen = tuple(i for i in answer.ids if i in hold.choices)
        narrowed = ResolvedAction(
            action=_manage(call.operation, chosen, call.request, "narrowed"),
            pending_id=hold.confirmation_id,
            options=hold.options or call.wo_ids,
            by_unverified_call=hold.by_unverified_call,
        )
        return Resolution(
            route="answered",
            actions=(narrowed,),
            transitions=tuple(transitions),
            reason=f"{hold.confirmation_id}: the party picked {_ids(chosen)}; held anew",
            **common,  # type: ignore[arg-type]
        )

    if not package.answers_on(hold.asked_on):
        # A YES counts where the question was asked, or from a call attestation A vouches for:
        # anyone can make a call show this number. Nothing is released; the number's owner is
        # asked again, by text, where only they read it.
        return Resolution(
            route="answered",
            actions=(
                _ask_again(hold, say=worded(_not_where_asked(package, hold.asked_on), language)),
            ),
            transitions=tuple(transitions),
            reason=f"{hold.confirmation_id}: a YES, but not on the {hold.asked_on.value} "
            "channel it was asked on (a call's caller ID alone proves nothing); asked again",
            **common,  # type: ignore[arg-type]
        )

    # YES: re-validate every held work order against the hold, then release exactly as held.
    check = revalidate(
        [
            Target(
                wo_id=wo_id,
                operation=operation,
                asked_at=hold.held_at,
                then=_snapshot(hold, wo_id),
                current=work_orders.get(wo_id),
                interrupted_at=interrupted.get(wo_id),
            )
            for wo_id, operation in hold_targets(hold)
        ],
        sender,
        judge,
    )
    if check.outcome == "valid":
        return Resolution(
            route="answered",
            actions=_releases(hold),
            transitions=tuple(transitions),
            revalidation=check,
            reason=f"{hold.confirmation_id}: YES, re-validated: release exactly as held",
            **common,  # type: ignore[arg-type]
        )
    # Stale or superseded: say what changed and ask again about what still holds; never act.
    # After an emergency the same work orders are asked about again; a changed one is left out.
    keep = ("valid", "superseded") if check.outcome == "superseded" else ("valid",)
    still = {c.wo_id for c in check.checks if c.outcome in keep}
    say = truncate(_capital(check.summary()) + ".", 300)
    again = _still_held(hold, still, say, check.outcome)
    if again is None:
        transitions.append(
            _close("confirmation", hold.confirmation_id, "held", "discarded", "nothing still holds")
        )
        again = _reply(
            f"{say} So I haven't changed anything.",
            hold.confirmation_id,
            revalidation=check.outcome,
        )
    return Resolution(
        route="answered",
        actions=(again,),
        transitions=tuple(transitions),
        revalidation=check,
        reason=f"{hold.confirmation_id}: YES, but {check.outcome}: {check.summary()}",
        **common,  # type: ignore[arg-type]
    )


HoldOperation = Literal["cancel", "reschedule", "schedule", "relay", "rate", "complete"]


def _manage_operation(operation: str) -> HoldOperation:
    return (
        "cancel"
        if operation == "cancel"
        else "complete"
        if operation == "complete"
        else "reschedule"
    )


def hold_targets(hold: PendingConfirmation) -> tuple[tuple[str, HoldOperation], ...]:
    """Each existing work order a hold would act on, with what it would do there: what a YES
    re-validates (a work order a held create opens is new: nothing to re-check)."""
    if hold.call is not None:
        operation = _manage_operation(hold.call.operation)
        return tuple((wo_id, operation) for wo_id in hold.call.wo_ids)
    targets: dict[str, HoldOperation] = {}
    for action in hold.held:
        for wo_id, operation in action_targets(action):
            targets.setdefault(wo_id, operation)
    return tuple(targets.items())


def action_targets(action: Action) -> tuple[tuple[str, HoldOperation], ...]:
    """The existing work orders one held action would act on, and how."""
    if isinstance(action, ManageExisting):
        operation = _manage_operation(action.params.operation)
        return tuple((wo_id, operation) for wo_id in action.params.wo_ids)
    target = action.target_wo_id
    if target is None or is_new_ref(target):
        return ()
    if isinstance(action, ScheduleVisit):
        return ((target, "schedule"),)
    if isinstance(action, RecordRating):
        return ((target, "rate"),)
    if isinstance(action, (RelayToOpenWo, RelayToVendor)):
        return ((target, "relay"),)
    return ()


def _snapshot(hold: PendingConfirmation, wo_id: str) -> WoSnapshot | None:
    return next((s for s in hold.wo_snapshots if s.wo_id == wo_id), None)


def _releases(hold: PendingConfirmation) -> tuple[ResolvedAction, ...]:
    """What a re-validated YES runs: exactly the held call, or each held action in order."""
    if hold.call is not None:
        call = hold.call
        held: tuple[Action, ...] = (
            _manage(call.operation, call.wo_ids, call.request, "released on YES"),
        )
    else:
        held = hold.held
    return tuple(
        ResolvedAction(
            action=action, pending_id=hold.confirmation_id, release=True, revalidation="valid"
        )
        for action in held
    )


def _ask_again(hold: PendingConfirmation, *, say: str) -> ResolvedAction:
    """The same hold, asked again (held anew, superseding this one): nothing runs."""
    if hold.call is not None:
        call = hold.call
        return ResolvedAction(
            action=_manage(call.operation, call.wo_ids, call.request, "asked again"),
            pending_id=hold.confirmation_id,
            say=say,
            options=hold.options,
            by_unverified_call=hold.by_unverified_call,
        )
    return ResolvedAction(
        action=hold.held[0],
        pending_id=hold.confirmation_id,
        say=say,
        held=hold.held,
        by_unverified_call=hold.by_unverified_call,
    )


def _still_held(
    hold: PendingConfirmation, still: set[str], say: str, outcome: RevalidationOutcome
) -> ResolvedAction | None:
    """After a re-validation that found changes: the part of the hold that still stands, held
    anew with what changed said first; None when nothing does."""
    if hold.call is not None:
        call = hold.call
        targets = tuple(i for i in call.wo_ids if i in still)
        if not targets:
            return None
        return ResolvedAction(
            action=_manage(call.operation, targets, call.request, "re-validated: asked again"),
            pending_id=hold.confirmation_id,
            revalidation=outcome,
            say=say,
            by_unverified_call=hold.by_unverified_call,
        )
    kept: list[Action] = []
    for action in hold.held:
        if isinstance(action, ManageExisting):
            ids = tuple(i for i in action.params.wo_ids if i in still)
            if ids:
                kept.append(_manage(action.params.operation, ids, action.params.request, "kept"))
        elif all(wo_id in still for wo_id, _ in action_targets(action)):
            kept.append(action)
    if not kept:
        return None
    return ResolvedAction(
        action=kept[0],
        pending_id=hold.confirmation_id,
        revalidation=outcome,
        say=say,
        held=tuple(kept),
        by_unverified_call=hold.by_unverified_call,
    )


def _not_where_asked(package: Package, asked_on: Channel) -> Texts:
    """Why a YES released nothing, said first when the party is asked again by text."""
    came = next((m.channel for m in package.messages if not m.answers_on(asked_on)), None)
    return YES_IN_APP if came is Channel.IN_APP else YES_BY_CALL


# -- clarifications ------------------------------------------------------------------------------


def _answer_question(
    question: PendingClarification,
    text: str,
    sender: Party,
    work_orders: Mapping[str, WorkOrder],
    interrupted: Mapping[str, datetime],
    transitions: list[PendingTransition],
    judge: Judge,
    package: Package,
    answers_question: AnswerJudge | None,
) -> Resolution:
    deferred_call = _call_of(question)
    # "2 is done", "both are finished": the words of being done say nothing about which.
    read = which_done(text) if deferred_call and deferred_call.operation == "complete" else text
    answer = read_answer(read, question.candidate_ids, question.candidate_lines)
    language = language_for(sender.language, text)
    if (
        answer.kind == "unclear"
        and answers_question is not None
        and not answers_question(question.question, question.candidate_lines, text)
    ):
        answer = answer.model_copy(update={"kind": "other", "why": "a new topic (judged)"})
    common = {
        "kind": "clarification",
        "pending_id": question.clarification_id,
        "answer": answer.kind,
    }
    if answer.kind in ("other", "yes"):
        # A new topic: the question stays open (it expires) and the brain reads the package.
        return Resolution(
            route="brain",
            transitions=tuple(transitions),
            reason=f"{question.clarification_id}: not an answer (a new topic); left open",
            **common,  # type: ignore[arg-type]
        )
    if answer.kind == "no":
        transitions.append(
            _close("clarification", question.clarification_id, "open", "discarded", "none of them")
        )
        call = deferred_call
        manager = sender.role is PartyRole.PM
        return Resolution(
            route="answered",
            actions=(
                _reply(
                    nothing_done(call, language, manager=manager)
                    if call is not None
                    else worded(NONE_OF_THEM, language),
                    question.clarification_id,
                ),
            ),
            transitions=tuple(transitions),
            reason=f"{question.clarification_id}: none of them; discarded",
            **common,  # type: ignore[arg-type]
        )
    if answer.kind == "unclear":
        again = ResolvedAction(
            action=Clarify(
                confidence=1.0,
                why="the answer did not pick one of the options",
                evidence=truncate(text, 400),
                params=ClarifyParams(
                    question=worded(
                        WHICH_AGAIN if len(question.candidate_ids) > 1 else WHICH_AGAIN_ONE,
                        language,
                    ),
                    candidate_ids=question.candidate_ids[:10],
                    reason="multi_context"
                    if len(question.candidate_ids) > 1
                    else "ambiguous_relation",
                    call=_call_of(question),
                ),
            ),
            pending_id=question.clarification_id,
            deferred_text=question.deferred_text,
            deferred=question.deferred,
        )
        return Resolution(
            route="answered",
            actions=(again,),
            transitions=tuple(transitions),
            by_unverified_call=question.by_unverified_call,
            reason=f"{question.clarification_id}: '{truncate(text, 60)}' picks none; asked again",
            **common,  # type: ignore[arg-type]
        )

    # A pick: re-validate the chosen work orders, then replay the deferred reading on each.
    chosen = [i for i in answer.ids if i in question.candidate_ids]
    snapshots = {s.wo_id: s for s in question.candidate_snapshots}
    existing = [i for i in chosen if i != NEW_CANDIDATE]
    check = revalidate(
        [
            Target(
                wo_id=wo_id,
                operation=_operation_of(question, wo_id),
                asked_at=question.asked_at,
                then=snapshots.get(wo_id),
                current=work_orders.get(wo_id),
                interrupted_at=interrupted.get(wo_id),
            )
            for wo_id in existing
        ],
        sender,
        judge,
    )
    transitions.append(
        _close("clarification", question.clarification_id, "open", "resolved", answer.why)
    )
    replay: list[ResolvedAction] = []
    call = _call_of(question)
    valid = [i for i in chosen if i != NEW_CANDIDATE and i in check.valid_ids]
    if NEW_CANDIDATE in chosen:
        replay.append(
            ResolvedAction(
                action=_create_from(question, package), pending_id=question.clarification_id
            )
        )
    if call is not None and call.operation in ("cancel", "reschedule", "complete") and valid:
        # One call over every work order picked: one hold, one YES (seed 004); a vendor's
        # ``complete`` reports each job picked, as a report naming them would.
        replay.append(
            ResolvedAction(
                action=_manage(call.operation, valid, _request(question, call), "picked"),
                pending_id=question.clarification_id,
                revalidation="valid",
                options=tuple(valid),
            )
        )
    else:
        replay.extend(
            ResolvedAction(
                action=_deferred_for(question, wo_id, call),
                pending_id=question.clarification_id,
                revalidation="valid",
            )
            for wo_id in valid
        )
        replay = _one_call_each(replay)
    if check.invalid:
        replay.append(
            _reply(
                truncate(worded(NOT_ACTED_CHANGED, language, what=_capital(check.summary())), 500),
                question.clarification_id,
                revalidation=check.outcome,
            )
        )
    return Resolution(
        route="answered",
        actions=tuple(replay),
        transitions=tuple(transitions),
        revalidation=check if existing else None,
        by_unverified_call=question.by_unverified_call,
        reason=f"{question.clarification_id}: answered {_ids(chosen)} ({answer.why}); "
        f"re-validation {check.outcome if existing else 'not needed'}",
        **common,  # type: ignore[arg-type]
    )


def _call_of(question: PendingClarification) -> DeferredCall | None:
    """The command the question deferred: stored with it, else read from the words it put on
    hold ("cancel both please" asked about with no call is still a cancel, never a note)."""
    if question.call is not None:
        return question.call
    if any(isinstance(a, ManageExisting) for a in question.deferred):
        return None  # the brain's readings say what to do with each
    command = command_in(question.deferred_text)
    if command is None:
        return None
    return DeferredCall(operation=command, request=truncate(question.deferred_text, 300))


def _request(question: PendingClarification, call: DeferredCall) -> str:
    return truncate(call.request or " ".join(question.deferred_text.split()), 300)


def _one_call_each(replay: list[ResolvedAction]) -> list[ResolvedAction]:
    """The brain's held readings of one operation joined into one call over their work orders:
    two holds would leave only the last one open."""
    merged: list[ResolvedAction] = []
    calls: dict[str, int] = {}
    for item in replay:
        action = item.action
        if not isinstance(action, ManageExisting):
            merged.append(item)
            continue
        operation = action.params.operation
        if operation not in calls:
            calls[operation] = len(merged)
            merged.append(item)
            continue
        first = merged[calls[operation]]
        held = first.action
        assert isinstance(held, ManageExisting)
        ids = tuple(dict.fromkeys((*held.params.wo_ids, *action.params.wo_ids)))
        merged[calls[operation]] = first.model_copy(
            update={
                "action": _manage(operation, ids, held.params.request, "picked"),
                "options": ids,
            }
        )
    return merged


def _operation_of(question: PendingClarification, wo_id: str) -> HoldOperation:
    call = _call_of(question)
    if call is not None:
        return call.operation
    for action in question.deferred:
        if isinstance(action, ManageExisting) and wo_id in action.params.wo_ids:
            return "cancel" if action.params.operation == "cancel" else "reschedule"
        if action.target_wo_id == wo_id and action.lane == "schedule_visit":
            return "schedule"
    return "relay"


def _deferred_for(
    question: PendingClarification, wo_id: str, call: DeferredCall | None = None
) -> Action:
    """The reading withheld for ``wo_id``: the deferred rating or note, else the brain's reading
    narrowed to it, else the words relayed."""
    if call is not None and call.operation == "rate" and call.stars is not None:
        return RecordRating(
            target_wo_id=wo_id,
            confidence=1.0,
            why=f"answer to {question.clarification_id}: the rating it asked about",
            evidence=truncate(question.deferred_text, 400),
            params=RecordRatingParams(stars=call.stars, comment=call.request or None),
        )
    for action in question.deferred:
        if isinstance(action, ManageExisting) and wo_id in action.params.wo_ids:
            return _manage(action.params.operation, (wo_id,), action.params.request, "replayed")
        if action.target_wo_id == wo_id:
            return action
    note = (call.request if call is not None else "") or question.deferred_text
    note = note or "(the tenant chose this work order)"
    if (command := command_in(note)) is not None:
        # A command is never a note for the vendor: it is held as the command it is.
        return _manage(command, (wo_id,), truncate(note, 300), "a command, not a note")
    return RelayToOpenWo(
        target_wo_id=wo_id,
        confidence=1.0,
        why=f"answer to {question.clarification_id}: replays the words it asked about",
        evidence=truncate(note, 400),
        params=RelayToOpenWoParams(note=truncate(note, 1000)),
    )


def _create_from(question: PendingClarification, package: Package) -> Action:
    for action in question.deferred:
        if isinstance(action, CreateWo):
            return action
    words = question.deferred_text or package.text
    summary = truncate(" ".join(words.split()), 200)
    return CreateWo(
        confidence=1.0,
        why=f"answer to {question.clarification_id}: something new",
        evidence=truncate(words, 400),
        params=CreateWoParams(summary=summary if len(summary) >= 3 else "new request"),
    )


# -- helpers -------------------------------------------------------------------------------------


def _manage(operation: str, wo_ids: Sequence[str], request: str, why: str) -> ManageExisting:
    return ManageExisting(
        confidence=1.0,
        why=why,
        params=ManageExistingParams(
            operation=operation,  # type: ignore[arg-type]
            wo_ids=tuple(wo_ids)[:20],
            request=request,
        ),
    )


def _reply(
    text: str, pending_id: str, *, revalidation: RevalidationOutcome | None = None
) -> ResolvedAction:
    return ResolvedAction(
        action=ContinueWithAssistant(
            confidence=1.0,
            why="the answer to an open question, said back",
            params=ContinueWithAssistantParams(reply_hint=truncate(text, 500)),
        ),
        pending_id=pending_id,
        revalidation=revalidation,
    )


def _close(
    kind: PendingKind,
    pending_id: str,
    expected: str,
    to: Literal["resolved", "discarded", "expired", "superseded"],
    reason: str = "",
) -> PendingTransition:
    return PendingTransition(
        kind=kind, pending_id=pending_id, expected=expected, to=to, reason=truncate(reason, 300)
    )


def _ids(ids: Sequence[str], and_: str = "and") -> str:
    ids = list(ids)
    if len(ids) <= 1:
        return "".join(ids) or "nothing"
    return ", ".join(ids[:-1]) + f" {and_} " + ids[-1]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def snapshots_of(work_orders: Sequence[WorkOrder]) -> tuple[WoSnapshot, ...]:
    return tuple(WoSnapshot.of(wo) for wo in work_orders)
