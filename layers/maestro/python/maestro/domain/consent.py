"""SMS consent: the opt-out and opt-in keywords (docs/consent-and-language.md).

A keyword counts only alone in a message (surrounding spaces and punctuation aside, any case), as
Twilio reads it: "STOP" opts out, "please stop the noise upstairs" does not. The lists are
Twilio's default keywords for a long code; Twilio itself answers each one at the carrier (its
own confirmation text) and refuses to send to an opted-out number (error 21610), so maestro never
sends a confirmation of its own.

``YES`` is one of Twilio's opt-in keywords, but in maestro it is also the answer to a held
confirmation. It therefore opts a person back in only while they are opted out (Twilio
re-subscribes them on it too), and it is never treated as a bare keyword: a "yes" always goes on
to the pipeline as the answer it is. START and UNSTOP opt in whatever the state (no change when
already in).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from maestro.domain.common import AwareDatetime, Frozen
from maestro.domain.models import Channel, Package

__all__ = [
    "OPT_IN_KEYWORDS",
    "OPT_IN_WHILE_OPTED_OUT",
    "OPT_OUT_KEYWORDS",
    "TWILIO_UNSUBSCRIBED",
    "ConsentChange",
    "ConsentState",
    "consent_change",
    "consent_keyword",
    "is_bare_consent_keyword",
    "only_consent_keywords",
]

OPT_OUT_KEYWORDS = frozenset(
    {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
)
"""Twilio's default opt-out keywords (a long code's Advanced Opt-Out defaults)."""
OPT_IN_KEYWORDS = frozenset({"START", "UNSTOP"})
"""Opt back in, whatever the state."""
OPT_IN_WHILE_OPTED_OUT = frozenset({"YES"})
"""Opt back in only while opted out: otherwise the answer to a question, nothing more."""
TWILIO_UNSUBSCRIBED = "21610"
"""Twilio's error code for a message to a number that has opted out ("Attempt to send to
unsubscribed recipient")."""

_EDGES = re.compile(r"^[\s.!¡?¿,;:'\"()*~-]+|[\s.!¡?¿,;:'\"()*~-]+$")


def consent_keyword(body: str) -> str | None:
    """The consent keyword ``body`` is, upper case, or None: the whole message must be the one
    word (punctuation and spaces around it aside)."""
    word = _EDGES.sub("", body).upper()
    if word in OPT_OUT_KEYWORDS | OPT_IN_KEYWORDS | OPT_IN_WHILE_OPTED_OUT:
        return word
    return None


ConsentSource = Literal["keyword", "twilio_21610"]


class ConsentChange(Frozen):
    """What an inbound message or a status callback does to a phone's consent."""

    opted_out: bool
    source: ConsentSource
    detail: str = Field(max_length=64, description="The keyword, or the message SID Twilio refused")
    only_if_opted_out: bool = Field(
        default=False, description="An opt-in that applies only while opted out (YES)"
    )


def consent_change(body: str) -> ConsentChange | None:
    """What an inbound SMS body does to its sender's consent, or None when it is no keyword."""
    word = consent_keyword(body)
    if word is None:
        return None
    if word in OPT_OUT_KEYWORDS:
        return ConsentChange(opted_out=True, source="keyword", detail=word)
    return ConsentChange(
        opted_out=False,
        source="keyword",
        detail=word,
        only_if_opted_out=word in OPT_IN_WHILE_OPTED_OUT,
    )


def is_bare_consent_keyword(body: str) -> bool:
    """A message that is only an opt-out or START/UNSTOP keyword: Twilio has answered it at the
    carrier, and maestro answers nothing. (YES is never one: it is an answer.)"""
    word = consent_keyword(body)
    return word is not None and word not in OPT_IN_WHILE_OPTED_OUT


def only_consent_keywords(package: Package) -> bool:
    """Every SMS of the package is a bare keyword (STOP, START…): nothing to act on or answer."""
    return all(
        m.channel is Channel.SMS and is_bare_consent_keyword(m.body) for m in package.messages
    )


class ConsentState(Frozen):
    """A phone's consent as stored: opted out or not, since when and why."""

    phone: str
    opted_out: bool
    at: AwareDatetime
    source: ConsentSource
    detail: str = ""
