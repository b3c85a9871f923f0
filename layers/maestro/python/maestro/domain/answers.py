"""Reading a short answer to a question maestro asked: which of the numbered candidates it picks,
all of them, yes, no, an unclear attempt, or something else entirely (a new topic).

Pure and deliberately narrow: it never guesses. "1", "#2", "the second one", "last", "WO-204",
"the kitchen one" (words only one candidate's line has), "both", "all of them", "1 and 3" pick;
"yes" (or the Spanish "sí", written with or without its accent) picks only when there was one
candidate. A number inside a longer sentence ("fine to come
in, 2 onward") is not an ordinal (I7). What is neither an answer nor clearly a new topic is
"unclear": the question is asked again, never guessed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

from maestro.domain.common import Frozen

__all__ = ["NEW_CANDIDATE", "Answer", "read_answer", "read_confirmation", "tokens"]

NEW_CANDIDATE = "new"
"""The candidate id for "something new" (a new request rather than an open one)."""

AnswerKind = Literal["pick", "yes", "no", "unclear", "other"]


class Answer(Frozen):
    kind: AnswerKind
    ids: tuple[str, ...] = ()
    why: str = ""


_ORDINAL_WORDS = (
    ("first", "1st", "one"),
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
    **{str(n): n - 1 for n in range(100)},  # "0" is -1: out of range, never a guess
}


def _vocab(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Words that carry no choice: "the second one", "option #2", "I mean 1 please".
_FILLERS = _vocab(
    "the option opt number num nr no it its is that this i im mean meant pick choose want go "
    "with please pls ok okay thanks thank you thx a my one ones and for about of them"
)
_ALL = _vocab("all both everything every each")
_YES = _vocab(
    "yes y yeah yea yep yup ya confirm confirmed sure correct right affirmative absolutely "
    "definitely do go ahead proceed please cancel reschedule move it them that"
    " si por favor gracias"  # a Spanish prompt gets Spanish answers: "sí, por favor"
)
_YES_CORE = _vocab("yes y yeah yea yep yup ya confirm confirmed sure correct affirmative si")
_YES_PHRASES = ("go ahead", "do it", "please do", "that's right", "thats right")
_NO = _vocab("no n nope nah don't dont not never mind nevermind keep stop leave wait neither none")
_NO_CORE = _vocab("no n nope nah neither none nevermind")
_NO_PHRASES = (
    "don't",
    "dont",
    "do not",
    "never mind",
    "keep it",
    "keep them",
    "leave it",
    "not now",
)
_NEW_WORDS = _vocab("new another different else nuevo nueva otro otra distinto")
_STOPWORDS = _FILLERS | _vocab(
    "about and any are but can for from has have her his not our out over she something "
    "their then there they was were what when where which who why will your yours unit "
    "work order again still back now just also too really is are"
)
_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SHORT = 3  # words: an answer this short that picks nothing is an unclear attempt


def _stem(word: str) -> str:
    # Enough to let "sinks" meet "sink" and "leaks" meet "leak"; not a real stemmer.
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def _fold(text: str) -> str:
    # Accents dropped, so "sí" is the token "si" (and "cocina" meets "cocína"), not a stray "s".
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_fold(text.lower()).replace("’", "'").replace("'", ""))


def tokens(text: str) -> list[str]:
    """The words of a short reply as the readers here see them: lower case, accents and
    apostrophes dropped ("Sí" → "si", "can't" → "cant"), "WO-204" one token."""
    return _tokens(text)


def _content(text: str) -> set[str]:
    return {_stem(t) for t in _tokens(text) if len(t) >= 3 and not t.isdigit()} - _STOPWORDS


def _mentioned(text: str, ids: Sequence[str]) -> list[str]:
    lowered = text.lower()
    found = [
        (m.start(), cid)
        for cid in ids
        if cid != NEW_CANDIDATE
        and (m := re.search(rf"(?<![\w-]){re.escape(cid.lower())}(?![\w-])", lowered))
    ]
    return [cid for _, cid in sorted(found)]


def _ordinals(tokens: Sequence[str], count: int) -> list[int] | None:
    """The candidate indexes a reply made only of ordinals names ("1", "1 and 3", "the
    second one"); None when it is not only that; [] when one is out of range (no guess)."""
    rest = [t for t in tokens if t not in _FILLERS or t == "one"]
    if tokens == ["one"]:
        rest = ["one"]
    elif "one" in rest and len(rest) > 1:
        rest = [t for t in rest if t != "one"]  # "the second one": "one" is a filler there
    if not rest:
        return None
    picks: list[int] = []
    for token in rest:
        if token == "last":
            picks.append(count - 1)
        elif token in _ORDINALS:
            index = _ORDINALS[token]
            if not 0 <= index < count:
                return []
            picks.append(index)
        else:
            return None
    return list(dict.fromkeys(picks))


def read_answer(
    text: str, candidate_ids: Sequence[str], candidate_lines: Sequence[str] = ()
) -> Answer:
    """How ``text`` answers a question that numbered ``candidate_ids`` (with their lines)."""
    ids = tuple(candidate_ids)
    lines = tuple(candidate_lines) or ids
    tokens = _tokens(text)
    if not ids or not tokens:
        return Answer(kind="unclear", why="an empty answer")

    mentioned = _mentioned(text, ids)
    if mentioned:
        return Answer(kind="pick", ids=tuple(mentioned), why="named by id")

    ordinals = _ordinals(tokens, len(ids))
    if ordinals is not None:
        if not ordinals:
            return Answer(kind="unclear", why="a number that is not one of the options")
        return Answer(kind="pick", ids=tuple(ids[i] for i in ordinals), why="by number")

    words = set(tokens)
    if words & _ALL and len(tokens) <= 5 and not words & (_NO_CORE | {"not", "dont"}):
        real = tuple(c for c in ids if c != NEW_CANDIDATE)
        return Answer(kind="pick", ids=real, why="all of them")

    if _is_no(tokens):
        return Answer(kind="no", why="declined")
    if _is_yes(tokens):
        if len(ids) == 1:
            return Answer(kind="pick", ids=ids, why="yes to the one candidate")
        return Answer(kind="unclear", why="yes, but to which?")

    if NEW_CANDIDATE in ids and words & _NEW_WORDS and len(tokens) <= 6:
        return Answer(kind="pick", ids=(NEW_CANDIDATE,), why="something new")

    # Words only one candidate's line has ("the kitchen one"); shared words ("leak") say nothing.
    line_words = [_content(line) for line in lines]
    reply = _content(text)
    picks = {
        holders[0]
        for word in reply
        if len(holders := [i for i, lw in enumerate(line_words) if word in lw]) == 1
    }
    shared = any(word in lw for word in reply for lw in line_words)
    if len(picks) == 1 and len(tokens) <= 8:
        return Answer(kind="pick", ids=(ids[picks.pop()],), why="by its words")
    if len(tokens) <= _SHORT or shared:
        return Answer(kind="unclear", why="does not pick one of the options")
    return Answer(kind="other", why="about something else")


def _is_yes(tokens: Sequence[str]) -> bool:
    lowered = " ".join(tokens)
    if any(phrase.replace("'", "") in lowered for phrase in _YES_PHRASES) and len(tokens) <= 6:
        return not (set(tokens) & _NO_CORE)
    return bool(tokens) and tokens[0] in _YES_CORE and set(tokens) <= _YES | _FILLERS


def _is_no(tokens: Sequence[str]) -> bool:
    lowered = " ".join(tokens)
    if any(phrase.replace("'", "") in lowered for phrase in _NO_PHRASES) and len(tokens) <= 6:
        return True
    return (
        bool(tokens)
        and tokens[0] in _NO_CORE
        and set(tokens) <= _NO | _FILLERS | _vocab("thanks thank you cancel gracias")
    )


def read_confirmation(text: str, choices: Sequence[str], lines: Sequence[str] = ()) -> Answer:
    """How ``text`` answers "Reply YES to …" for a hold over ``choices``: yes (release exactly
    as held), no (discard), a pick among the options (narrow or widen the hold), unclear (ask
    again: "ok" and "sounds good" are not an unambiguous YES), or other (a new topic)."""
    tokens = _tokens(text)
    if not tokens:
        return Answer(kind="unclear", why="an empty answer")
    if _is_no(tokens):
        return Answer(kind="no", why="declined")
    if _is_yes(tokens):
        return Answer(kind="yes", why="an unambiguous yes")
    if len(choices) > 1:
        picked = read_answer(text, choices, lines)
        if picked.kind == "pick":
            return picked
        return picked if picked.kind != "no" else Answer(kind="no", why="declined")
    if len(tokens) <= _SHORT:
        return Answer(kind="unclear", why="not an unambiguous yes or no")
    reply = _content(text)
    if any(word in _content(line) for word in reply for line in lines):
        return Answer(kind="unclear", why="about the hold, but not a yes or no")
    return Answer(kind="other", why="about something else")
