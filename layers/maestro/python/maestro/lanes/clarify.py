"""clarify: ask one question naming the candidates, and store it so the reply can resolve.

The stored PendingClarification keeps the candidates in the order they were numbered, with one
line each, so a later "1", "#2", "WO-204" or "the kitchen one" resolves to exactly one of them
via :func:`resolve_clarification_reply`, and anything less clear resolves to nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from maestro.domain.actions import Clarify, Lane
from maestro.domain.records import DEFAULT_PENDING_TTL, PendingClarification
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.common import finish

__all__ = ["NEW_CANDIDATE", "resolve_clarification_reply", "run"]

NEW_CANDIDATE = "new"
"""The candidate id dispose uses for "something new" (a new request rather than an open one)."""

_MAX_CANDIDATES = 10


def _candidates(action: Clarify, ctx: LaneContext) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The candidate ids (the action's, else every open context) and one line per candidate."""
    described = {c.context_id: c.description for c in ctx.open_contexts}
    ids = action.params.candidate_ids or tuple(c.context_id for c in ctx.open_contexts)
    ids = tuple(dict.fromkeys(ids))[:_MAX_CANDIDATES]
    lines = tuple(
        "something new" if cid == NEW_CANDIDATE else f"{cid}: {described.get(cid, cid)}"
        for cid in ids
    )
    return ids, lines


def _question(question: str, lines: Sequence[str]) -> str:
    # "1" only means something if the tenant saw the options numbered: add them unless the
    # question (dispose's, for one) already numbers every candidate.
    if len(lines) < 2 or all(f"{n})" in question for n in range(1, len(lines) + 1)):
        return question
    return question.rstrip() + " " + "; ".join(f"{n}) {line}" for n, line in enumerate(lines, 1))


def run(action: Clarify, ctx: LaneContext) -> LaneOutcome:
    ids, lines = _candidates(action, ctx)
    question = _question(action.params.question, lines)
    to = ctx.sender.phone if ctx.sender is not None else ctx.package.sender_phone
    ctx.send(to, question, suffix="question")
    # Keyed by the idempotency key: a re-run overwrites the same item with the same content.
    ctx.pending.put_clarification(
        PendingClarification(
            clarification_id=ctx.idempotency_key,
            package_id=ctx.package.package_id,
            conversation_id=ctx.package.conversation_id,
            party_id=ctx.sender.party_id if ctx.sender is not None else None,
            question=question,
            candidate_ids=ids,
            candidate_lines=lines,
            asked_at=ctx.now,
            expires_at=ctx.now + DEFAULT_PENDING_TTL,
        )
    )
    return finish(
        ctx,
        Lane.CLARIFY,
        note=f"asked ({action.params.reason}); candidates: {', '.join(ids) or 'none'}",
    )


# ---------------------------------------------------------------------------------------------
# Resolving the reply. Pure; never guesses: anything but one clear candidate is None.
# ---------------------------------------------------------------------------------------------

_ORDINAL_WORDS = (
    ("first", "1st"),
    ("second", "2nd", "two"),
    ("third", "3rd", "three"),
    ("fourth", "4th", "four"),
    ("fifth", "5th", "five"),
    ("sixth", "6th", "six"),
    ("seventh", "7th", "seven"),
    ("eighth", "8th", "eight"),
    ("ninth", "9th", "nine"),
    ("tenth", "10th", "ten"),
)
_ORDINALS: dict[str, int] = {
    **{word: i for i, words in enumerate(_ORDINAL_WORDS) for word in words},
    # "0" maps to -1: out of range like "11" with ten candidates, so never a guess.
    **{str(n): n - 1 for n in range(100)},
}
_LAST = "last"


def _vocab(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Words that carry no choice: "the second one", "option #2", "I mean 1 please". ("one" is one of
# them, so a bare "one" is handled on its own.) Apostrophes are dropped before this applies.
_FILLERS = _vocab(
    "the one option opt number num nr no it its is that this i im mean meant pick choose want "
    "go with please pls ok okay thanks thank you thx a my"
)
_YES = _vocab("yes y yeah yep yup correct right sure")
# Words too common to tell candidates apart, ignored in word matching.
_STOPWORDS = _FILLERS | _vocab(
    "about and any are but can for from has have her his not our out over she something that "
    "the their them then there they this was were what when where which who why will with "
    "your yours unit work order"
)
_TOKEN = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    # Enough to let "sinks" meet "sink" and "leaks" meet "leak"; not a real stemmer.
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _words(text: str) -> set[str]:
    return {_stem(t) for t in _TOKEN.findall(text.lower()) if len(t) >= 3 and not t.isdigit()}


def _mentioned_ids(text: str, candidate_ids: Sequence[str]) -> list[str]:
    found = []
    for cid in candidate_ids:
        if cid == NEW_CANDIDATE:
            continue  # "new" is a word, not an id: the word match handles "a new one"
        if re.search(rf"(?<![\w-]){re.escape(cid.lower())}(?![\w-])", text):
            found.append(cid)
    return found


def _ordinal(tokens: Sequence[str], count: int) -> int | None:
    """The candidate index a reply that is only an ordinal names; None if it is not only that.

    Raises IndexError when the ordinal is out of range (the caller answers None: no guess).
    """
    if tokens == ["one"]:
        return 0
    rest = [t for t in tokens if t not in _FILLERS]
    if len(rest) != 1:
        return None
    if rest[0] == _LAST:
        return count - 1
    if rest[0] not in _ORDINALS:
        return None
    index = _ORDINALS[rest[0]]
    if not 0 <= index < count:
        raise IndexError(rest[0])
    return index


def resolve_clarification_reply(text: str, pending: PendingClarification) -> str | None:
    """The candidate id a reply to ``pending`` names, or None when it names none or several.

    Understood: an ordinal alone ("1", "#2", "first", "the second one", "last"), an exact
    candidate id ("WO-204"), "yes" when there was a single candidate, or words that only one
    candidate's line contains ("the kitchen one"). A number inside a longer answer ("fine to
    come in, 2 onward") is not an ordinal (I7).
    """
    ids = pending.candidate_ids
    lowered = text.lower().strip()
    if not ids or not lowered:
        return None

    mentioned = _mentioned_ids(lowered, ids)
    if mentioned:
        return mentioned[0] if len(mentioned) == 1 else None

    tokens = _TOKEN.findall(lowered.replace("'", ""))
    try:
        index = _ordinal(tokens, len(ids))
    except IndexError:
        return None
    if index is not None:
        return ids[index]
    rest = [t for t in tokens if t not in _FILLERS]
    if len(ids) == 1 and rest and all(t in _YES for t in rest):
        return ids[0]
    return _by_words(lowered, pending)


def _by_words(lowered: str, pending: PendingClarification) -> str | None:
    """The one candidate the reply's telling words point at.

    A word is telling when exactly one candidate's line contains it ("kitchen" when only one
    line mentions a kitchen); words shared by several lines ("leak") say nothing. All telling
    words must point at the same candidate.
    """
    lines = pending.candidate_lines or pending.candidate_ids
    line_words = [_words(line) for line in lines]
    reply_words = _words(lowered) - _STOPWORDS
    picks: set[int] = set()
    for word in reply_words:
        holders = [i for i, words in enumerate(line_words) if word in words]
        if len(holders) == 1:
            picks.add(holders[0])
    if len(picks) != 1:
        return None
    return pending.candidate_ids[picks.pop()]
