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
# A work order as a command names it: its id, or the number a PM writes for it ("kill 205").
_REF = r"(?:wo[-\s]?#?\d+|#?\d{2,})"
# What a job is called when its visit moves: "my appointment", "the sink visit", "the time".
_WHEN = r"(?:visit|appointment|appt|time|date|day|slot)s?"
# What a job is called when it is called off: "the request", "that ticket", "the job".
_JOB = r"(?:visit|appointment|appt|repair|request|ticket|job|work\s+order)s?"
CANCEL = re.compile(
    r"\bcancel(?:l?ing)?\b|\bcall(?:ing)?\s+off\b|\bcancel(?:ar|a|e|en)\b|\banul(?:ar|a|e)\b"
    r"|\bno\s+longer\s+need\b|\bdon[’']?t\s+need\s+(?:\w+\s+){0,4}?any\s*more\b"
    # Spanish with the pronoun on the verb, accent or not: "cancélelo", "cancelarla".
    r"|\bcanc[eé]l(?:ar|a|e|en)(?:lo|la|los|las)\b|\banúl(?:ar|a|e)?(?:lo|la|los|las)\b"
    r"|\bya\s+no\s+(?:lo\s+|la\s+|los\s+|las\s+)?(?:necesito|necesitamos|hace\s+falta)\b"
    r"|\bno\s+longer\s+(?:needed|necessary|required)\b|\bnot\s+needed\s+any\s*more\b"
    # A PM's (or anyone's) shorthand, only with what it calls off right after it: "kill 205",
    # "scrap that ticket", "drop WO-12" (never "drop it off", "kill the power").
    r"|\b(?:kill|scrap|drop|nix|void|withdraw|scratch|ditch)\s+(?:(?:this|that|the|my|our)\s+"
    rf"(?:\w+\s+){{0,2}}?{_JOB}\b|{_REF}\b|(?:it|that|them)\b(?!\s+(?:off|by|in|down|at|on|out)\b))",
    re.IGNORECASE,
)
RESCHEDULE = re.compile(
    r"\bre-?schedul(?:e|ing)\b|\bpostpone\b|\breprogram(?:ar|a|e|en)\b"
    rf"|\bpush\s+{_OBJECT}\s+back\b|\bmove\s+{_OBJECT}\s+to\b"
    # The visit moved by what it is: "move my appointment", "change the time for the light
    # repair", "push the sink visit to friday", "bump 204 to next week".
    r"|\b(?:move|push|change|shift|bump|switch)\s+(?:(?:my|our|the|this|that|tomorrow[’']?s|"
    rf"today[’']?s|\w+[’']s)\s+)?(?:\w+\s+){{0,2}}?{_WHEN}\b"
    rf"|\b(?:move|push|bump|shift)\s+{_REF}\s+(?:back|to|till|until|out)\b"
    # "can the electrician come another day", "could we do a different time".
    r"|\b(?:come|do\s+it|make\s+it|do|visit|stop\s+by)\s+(?:on\s+|at\s+)?(?:another|a\s+different|"
    r"a\s+later|some\s+other)\s+(?:day|time|date)\b"
    r"|\b(?:cambiar|mover|cambie|mueva|cambiemos)\s+(?:la|el|mi|su)\s+(?:cita|visita|hora|fecha)\b"
    r"|\botro\s+d[ií]a\b",
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
