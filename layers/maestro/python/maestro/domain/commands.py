"""The words of a command to change a work order (cancel it, move its visit), and what maestro
says when it asks which work orders a command is for.

Shared by the offline brain (rule 7 reads a command with them) and by the answer to a question
(``maestro.domain.pending``): words that ask to cancel or reschedule are a command, held for a
YES, never a note passed on to the vendor. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from maestro.domain.actions import DeferredCall
from maestro.domain.common import truncate
from maestro.domain.fixed_texts import (
    NOT_CAUGHT,
    NOTHING_CANCELLED,
    NOTHING_CLOSED,
    NOTHING_MARKED_FINISHED,
    NOTHING_MOVED,
    NOTHING_PASSED_ON,
    NOTHING_RATED,
    WHICH_FINISHED,
    WHICH_TO_CANCEL,
    WHICH_TO_CLOSE,
    WHICH_TO_MOVE,
    WHICH_TO_PASS_ON,
    WHICH_TO_RATE,
    Texts,
)
from maestro.domain.gather import availability_in
from maestro.domain.language import in_language

__all__ = [
    "CANCEL",
    "NEGATED_COMMAND",
    "RESCHEDULE",
    "Command",
    "call_question",
    "command_in",
    "new_time",
    "nothing_done",
]

Command = Literal["cancel", "reschedule"]

_OBJECT = r"(?:it|them|that|this|those|these|the\s+(?:visit|appointment|repair|request)s?)"
CANCEL = re.compile(
    r"\bcancel(?:l?ing)?\b|\bcall(?:ing)?\s+off\b|\bcancel(?:ar|a|e|en)\b|\banul(?:ar|a|e)\b"
    r"|\bno\s+longer\s+need\b|\bdon[’']?t\s+need\s+(?:\w+\s+){0,4}?any\s*more\b",
    re.IGNORECASE,
)
RESCHEDULE = re.compile(
    r"\bre-?schedul(?:e|ing)\b|\bpostpone\b|\breprogram(?:ar|a|e|en)\b"
    rf"|\bpush\s+{_OBJECT}\s+back\b|\bmove\s+{_OBJECT}\s+to\b",
    re.IGNORECASE,
)
NEGATED_COMMAND = re.compile(
    r"\b(?:don[’']?t|do\s+not|not|never|didn[’']?t|no\s+need\s+to|no)\s+(?:\w+\s+)?"
    r"(?:cancel|re-?schedul|postpone|call\s+off|anul|reprogram)",
    re.IGNORECASE,
)


def command_in(text: str) -> Command | None:
    """The command ``text`` gives, or None ("don't cancel it" gives none). "cancel friday,
    reschedule to monday" keeps the work order: a reschedule."""
    if NEGATED_COMMAND.search(text):
        return None
    if RESCHEDULE.search(text):
        return "reschedule"
    if CANCEL.search(text):
        return "cancel"
    return None


def new_time(request: str) -> str:
    """The time a reschedule asks for, in time words only ("" when it gives none): those after
    the command when it has some ("cancel friday, reschedule to monday 10am" → "monday 10am"),
    else any in the words."""
    ends = [m.end() for m in RESCHEDULE.finditer(request)]
    after = availability_in(request[ends[-1] :]) if ends else ""
    return after or availability_in(request)


# A ``complete`` is a vendor's report of their jobs, or a property manager's close of them.
_QUESTIONS: dict[str, Texts] = {
    "cancel": WHICH_TO_CANCEL,
    "reschedule": WHICH_TO_MOVE,
    "rate": WHICH_TO_RATE,
    "relay": WHICH_TO_PASS_ON,
    "complete": WHICH_FINISHED,
    "close": WHICH_TO_CLOSE,
}
_NOTHING_DONE: dict[str, Texts] = {
    "cancel": NOTHING_CANCELLED,
    "reschedule": NOTHING_MOVED,
    "rate": NOTHING_RATED,
    "relay": NOTHING_PASSED_ON,
    "complete": NOTHING_MARKED_FINISHED,
    "close": NOTHING_CLOSED,
}


def _asked(call: DeferredCall, manager: bool) -> str:
    return "close" if call.operation == "complete" and manager else call.operation


_MAX_QUESTION = 1000  # one text of a few segments, whatever the candidates' lines


def call_question(
    call: DeferredCall,
    lines: Sequence[str],
    language: str,
    *,
    again: bool = False,
    manager: bool = False,
) -> str:
    """The question about ``call``: which of the numbered ``lines`` it is for (asked again:
    "Sorry, I didn't catch which ones you mean." first). A ``complete`` asks a property manager
    which to close, anyone else (a vendor) which is finished."""
    options = "; ".join(f"{n}) {line}" for n, line in enumerate(lines, 1))
    question = in_language(_QUESTIONS[_asked(call, manager)], language).format(
        options=options.rstrip(". "), stars=call.stars or ""
    )
    lead = in_language(NOT_CAUGHT, language) + " " if again else ""
    return truncate(lead + question, _MAX_QUESTION)


def nothing_done(call: DeferredCall, language: str, *, manager: bool = False) -> str:
    """What the party hears when they answer "none of them" to a question about ``call``."""
    return in_language(_NOTHING_DONE[_asked(call, manager)], language)
