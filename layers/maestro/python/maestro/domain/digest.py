"""The hourly digest page: what the PM is told in one page instead of many. Pure.

What goes to the digest instead of a page of its own: a text from a number nobody knows (one
line per number per hour), and a page a daily cap refused (an unknown number's emergency past
the page cap, a break-in, a fallback). The page is bounded: the first ``max_lines`` lines
(emergencies first), then "and N more"; each line quotes at most a short excerpt.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import Field

from maestro.domain.common import AwareDatetime, Frozen, truncate
from maestro.domain.fixed_texts import (
    DIGEST_COUNTS_JOIN,
    DIGEST_HEAD,
    DIGEST_HELD_MANY,
    DIGEST_HELD_ONE,
    DIGEST_LINE,
    DIGEST_MORE,
    DIGEST_NOTHING,
    DIGEST_SAID,
    DIGEST_TEXTS,
    DIGEST_UNKNOWN_MANY,
    DIGEST_UNKNOWN_ONE,
    DIGEST_WHY,
    say,
)

__all__ = [
    "DIGEST_EXCERPT_CHARS",
    "DigestEntry",
    "DigestKind",
    "DigestLine",
    "digest_page",
    "hour_of",
    "next_hour",
]

DigestKind = Literal["emergency", "break_in", "fallback", "unknown_number"]


class DigestEntry(Frozen):
    """What one action adds to the hour's digest (instead of a page of its own)."""

    subject: str = Field(
        min_length=1, max_length=120, description="One line per subject per hour, e.g. the number"
    )
    kind: DigestKind
    who: str = Field(max_length=120, description="Whom it is about, as the PM reads it")
    excerpt: str = Field(default="", max_length=120, description="A short excerpt, never more")
    why: str = Field(default="", max_length=120, description="Why it is a line, not a page")
    package_id: str
    messages: int = Field(default=1, ge=1, description="The package's messages")
    at: AwareDatetime


class DigestLine(Frozen):
    """One line of an hour's digest: a subject's first entry, and how many came in all."""

    subject: str
    kind: DigestKind
    who: str
    excerpt: str = ""
    why: str = ""
    first_at: AwareDatetime
    last_at: AwareDatetime
    packages: int = Field(ge=1)
    messages: int = Field(ge=1)


DIGEST_EXCERPT_CHARS = 60
"""A digest line quotes at most this much of what was said."""
_ORDER: dict[DigestKind, int] = {"emergency": 0, "break_in": 1, "fallback": 2, "unknown_number": 3}
_LINE_CHARS = 160


def hour_of(at: datetime) -> datetime:
    """The UTC hour ``at`` falls in: the digest ``at`` belongs to."""
    return at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def next_hour(at: datetime) -> datetime:
    return hour_of(at) + timedelta(hours=1)


def _line(line: DigestLine) -> str:
    count = say(DIGEST_TEXTS, "en", number=line.messages) if line.messages > 1 else ""
    excerpt = truncate(line.excerpt, DIGEST_EXCERPT_CHARS)
    said = say(DIGEST_SAID, "en", excerpt=excerpt) if line.excerpt else ""
    why = say(DIGEST_WHY, "en", why=line.why) if line.why else ""
    text = say(
        DIGEST_LINE[line.kind],
        "en",
        time=f"{line.first_at:%H:%M}",
        who=line.who,
        count=count,
        said=said,
        why=why,
    )
    return truncate(text, _LINE_CHARS)


def digest_page(hour: datetime, lines: Sequence[DigestLine], max_lines: int) -> str:
    """The digest page for ``hour``: who and why, a line each, at most ``max_lines`` of them.
    Its wording is the fixed texts' (``DIGEST_*``, English only: a page only the PM reads)."""
    ordered = sorted(lines, key=lambda x: (_ORDER[x.kind], x.first_at, x.subject))
    unknown = sum(1 for x in lines if x.kind == "unknown_number")
    other = len(lines) - unknown
    parts = []
    if unknown:
        many = unknown != 1
        parts.append(say(DIGEST_UNKNOWN_MANY if many else DIGEST_UNKNOWN_ONE, "en", number=unknown))
    if other:
        parts.append(say(DIGEST_HELD_MANY if other != 1 else DIGEST_HELD_ONE, "en", number=other))
    head = say(
        DIGEST_HEAD,
        "en",
        day=f"{hour:%d %b}",
        start=f"{hour:%H:%M}",
        end=f"{hour + timedelta(hours=1):%H:%M}",
        counts=say(DIGEST_COUNTS_JOIN, "en").join(parts) or say(DIGEST_NOTHING, "en"),
    )
    shown = [_line(x) for x in ordered[:max_lines]]
    rest = len(ordered) - len(shown)
    tail = [say(DIGEST_MORE, "en", more=rest)] if rest > 0 else []
    return "\n".join([head, *shown, *tail])
