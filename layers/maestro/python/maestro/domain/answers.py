"""Reading a short answer to a question maestro asked: which of the numbered candidates it picks,
all of them, yes, no, an unclear attempt, or something else entirely (a new topic).

Pure and deliberately narrow: it never guesses. "1", "#2", "the second one", "last", "WO-204",
"the kitchen one" (words only one candidate's line has), "all of them", "1 and 3" pick; so do
several at once, each part naming one ("the fridge and the door lock", "2 & WO-303", "the first
two", "all but the kitchen one", "todas menos la 2"). "both" picks both of two, and of three it
picks nothing. "yes" (or the Spanish "sí", written with or without its accent) picks only when
there was one candidate. A number inside a longer sentence ("fine to come
in, 2 onward") is not an ordinal (I7). What is neither an answer nor clearly a new topic is
"unclear": the question is asked again, never guessed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

from maestro.domain.common import Frozen
from maestro.domain.spanish_gloss import gloss_word

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
    "with please pls ok okay thanks thank you thx a my one ones and for about of them just only "
    "la el las los de del"
)
_ALL = _vocab("all both everything every each todas todos todo ambas ambos")
_BOTH = _vocab("both ambas ambos")
_YES = _vocab(
    "yes y yeah yea yep yup ya confirm confirmed sure correct right affirmative absolutely "
    "definitely do go ahead proceed please cancel reschedule move it them that"
    " si por favor gracias"  # a Spanish prompt gets Spanish answers: "sí, por favor"
)
_YES_CORE = _vocab("yes y yeah yea yep yup ya confirm confirmed sure correct affirmative si")
_YES_PHRASES = ("go ahead", "do it", "please do", "that's right", "thats right")
_NO = _vocab(
    "no n nope nah don't dont not never mind nevermind keep stop leave wait neither none "
    "ninguna ninguno"
)
_NO_CORE = _vocab("no n nope nah neither none nevermind ninguna ninguno")
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
    # Spanish words meet the English lines of the candidates: "la del baño" names "bathroom".
    words = (w for t in _tokens(text) for w in gloss_word(t).split())
    return {_stem(w) for w in words if len(w) >= 3 and not w.isdigit()} - _STOPWORDS


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


# -- several at once ------------------------------------------------------------------------------

# Where one part of a choice ends and the next begins: "the fridge and the lock", "1, 3", "2 y 3".
_PART_BREAK = re.compile(r"[,;&+/]|\b(?:and|y|plus|as\s+well\s+as)\b")
_JOINED = re.compile(r"[&+]|\b(?:and|y|plus|as\s+well\s+as)\b")
# "the two of them", "las dos": both, not the option numbered two ("the 2", "la dos" stay numbers).
_THE_TWO = re.compile(
    r"\b(?:the|those|these|las|los|esas|esos|estas|estos)\s+(?:two|dos)\b(?!\s+(?:one|ones)\b)",
    re.IGNORECASE,
)
# "all but the kitchen one", "everything except 2", "todas menos la del baño".
_EXCEPT = re.compile(
    r"\b(?:but(?:\s+not)?|except(?:\s+for)?|excluding|besides|apart\s+from|other\s+than|minus"
    r"|menos|excepto|salvo)\b"
)
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "dos": 2, "tres": 3, "cuatro": 4}
_FIRST_LAST = re.compile(
    r"^(?:the\s+|las\s+|los\s+)?(first|last|primeras?|primeros?|ultimas?|ultimos?)\s+(\w+)$"
)
# Words a reply may say around its choice without naming one: what to do with them, or that the
# choice is final ("cancel the fridge and the lock, thanks").
_COMMAND_WORDS = _vocab("cancel cancelar reschedule move postpone rate yes yeah sure si")
# The things a command is about, as a party may call any of them ("the fridge and fan visits").
_JOB_WORDS = _vocab("visit appointment repair request job ticket")
_AROUND = _STOPWORDS | _ALL | _COMMAND_WORDS | _JOB_WORDS | _vocab("those these ones")
_MAX_SELECTION_TOKENS = 12  # longer is a sentence, not a choice
_MAX_PART_TOKENS = 6


def _first_or_last(text: str, count: int) -> list[int] | None:
    """ "the first two", "last 2", "las primeras dos": the indexes, or None when not that."""
    match = _FIRST_LAST.fullmatch(" ".join(_tokens(text)))
    if match is None:
        return None
    end, number = match.groups()
    n = _COUNTS.get(number) or (int(number) if number.isdigit() else 0)
    if not 2 <= n <= count:
        return None
    return list(range(n)) if end.startswith(("first", "primer")) else list(range(count - n, count))


def _part_choice(part: str, ids: Sequence[str], line_words: Sequence[set[str]]) -> list[int] | None:
    """The candidates one part of a reply names: by id, by number, or by words only one line
    has. [] when it names none and says nothing else (fillers, "all"); None when it is not a
    clear choice (a number out of range, words several lines share, words no line has)."""
    tokens = _tokens(part)
    if not tokens:
        return []
    if len(tokens) > _MAX_PART_TOKENS:
        return None
    lowered = {cid.lower(): i for i, cid in enumerate(ids) if cid != NEW_CANDIDATE}
    named = [lowered[t] for t in tokens if t in lowered]
    if named:
        return named
    ordinals = _ordinals(tokens, len(ids))
    if ordinals is not None:
        return ordinals or None
    if any(t.isdigit() for t in tokens):
        return None  # "2 onward": a number that is no choice (I7)
    said = _content(part) - _AROUND
    if not said:
        return []
    holders = {i for word in said for i, lw in enumerate(line_words) if word in lw}
    unknown = {word for word in said if not any(word in lw for lw in line_words)}
    picks = {
        i
        for word in said
        if len(holders_of := [i for i, lw in enumerate(line_words) if word in lw]) == 1
        for i in holders_of
    }
    if len(picks) != 1 or unknown or not holders:
        return None
    return list(picks)


def _several(text: str, ids: Sequence[str], lines: Sequence[str]) -> list[int] | None:
    """The candidates a reply names part by part ("the fridge and the door lock", "1, 3",
    "WO-301 and the fan one"), or None when any part is not a clear choice. "or" is a doubt,
    never a choice."""
    tokens = _tokens(text)
    if not tokens or len(tokens) > _MAX_SELECTION_TOKENS or {"or", "o"} & set(tokens):
        return None
    count = len(ids)
    if (ends := _first_or_last(text, count)) is not None:
        return ends
    line_words = [_content(line) for line in lines]
    picks: list[int] = []
    for part in _PART_BREAK.split(_fold(text.lower())):
        chosen = _part_choice(part, ids, line_words)
        if chosen is None:
            return None
        picks.extend(chosen)
    picks = list(dict.fromkeys(picks))
    if set(tokens) & _BOTH and len(picks) != 2:
        return None  # "both" and three named: which two?
    return picks or None


def _all_but(text: str, ids: Sequence[str], lines: Sequence[str]) -> Answer | None:
    """ "all but the kitchen one", "everything except 2", "todas menos la del baño": every
    candidate but the ones named after the "but". None when the reply is not of that shape."""
    folded = " ".join(_tokens(text))
    match = _EXCEPT.search(folded)
    if match is None:
        return None
    before = set(folded[: match.start()].split())
    if not before & _ALL or not before <= _ALL | _FILLERS | _COMMAND_WORDS or "no" in before:
        return None  # "all good but the fan still rattles" tells, it does not choose
    real = [i for i, cid in enumerate(ids) if cid != NEW_CANDIDATE]
    left_out = _several(folded[match.end() :], ids, lines)
    if not left_out:
        return Answer(kind="unclear", why="all but which?")
    kept = tuple(ids[i] for i in real if i not in left_out)
    if not kept:
        return Answer(kind="unclear", why="all but every one of them")
    return Answer(kind="pick", ids=kept, why="all but the ones named")


# A reply that opens by leaving some out: "not the sink one", "anything but 2", "except the
# fan", "menos la 2", "not the window, the other two". What it names is left out.
_LEADING_NOT = re.compile(
    r"^\s*(?:(?:just|only|anything|any|everything|all|todas?|todos?|todo|cualquiera)\s+)?"
    r"(?:but\s+not|but|except(?:\s+for)?|not|excluding|menos|excepto|salvo)\s+(?P<rest>.+)$",
    re.DOTALL,
)
# Words a reply may add after what it leaves out: "…, the other two", "…, the rest".
_THE_REST = _AROUND | _vocab("other others rest remaining one two three four dos tres demas")
# A word that turns what follows it around: a reply with one is never read as naming what it
# says ("not the sink one" picks anything but the sink), only as the shapes above read it.
_NEGATIONS = _vocab("not dont don't except excluding without nor menos excepto salvo")


def _leading_not(text: str, ids: Sequence[str], lines: Sequence[str]) -> Answer | None:
    """ "not the sink one", "anything but 2", "menos la del baño": every candidate but the
    ones named first. None when the reply does not open that way."""
    match = _LEADING_NOT.match(_fold(text.lower()).replace("’", "'"))
    if match is None or _is_no(_tokens(text)):
        return None  # "not now", "don't": a no
    parts = re.split(r"[,;:]|\s-\s", match.group("rest"), maxsplit=1)
    named = parts[0]
    tail = parts[1] if len(parts) > 1 else ""
    left_out = _several(named, ids, lines)
    if not left_out:
        return Answer(kind="unclear", why="all but which?")
    real = [i for i, cid in enumerate(ids) if cid != NEW_CANDIDATE]
    kept = tuple(ids[i] for i in real if i not in left_out)
    if not kept:
        return Answer(kind="unclear", why="all but every one of them")
    said = set(_tokens(tail))
    counted = {({"one": 1, "una": 1, "uno": 1} | _COUNTS).get(t) for t in said} - {None}
    if said and (not said <= _THE_REST or counted - {len(kept)}):
        return Answer(kind="unclear", why="all but some, and then something else")
    return Answer(kind="pick", ids=kept, why="all but the ones named first")


def read_answer(
    text: str, candidate_ids: Sequence[str], candidate_lines: Sequence[str] = ()
) -> Answer:
    """How ``text`` answers a question that numbered ``candidate_ids`` (with their lines)."""
    ids = tuple(candidate_ids)
    lines = tuple(candidate_lines) or ids
    text = _THE_TWO.sub("both", text)
    tokens = _tokens(text)
    if not ids or not tokens:
        return Answer(kind="unclear", why="an empty answer")

    excepted = _all_but(text, ids, lines) or _leading_not(text, ids, lines)
    if excepted is not None:
        return excepted
    if set(tokens) & _NEGATIONS:
        # "the first, not the second", "WO-301 but not WO-302": what is left out is no pick,
        # and no reading here tells the two apart. Asked again (a no is still a no).
        if _is_no(tokens):
            return Answer(kind="no", why="declined")
        return Answer(kind="unclear", why="names some and leaves some out")
    several = _several(text, ids, lines)
    if several is not None:
        return Answer(kind="pick", ids=tuple(ids[i] for i in several), why="named, part by part")

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
        if words & _BOTH and len(real) != 2:
            return Answer(kind="unclear", why=f'"both" of {len(real)}: which two?')
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
    # "the fridge and the garage": one part named no candidate, so the other is no answer alone.
    joined = _JOINED.search(_fold(text.lower())) is not None
    if len(picks) == 1 and len(tokens) <= 8 and not joined:
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
