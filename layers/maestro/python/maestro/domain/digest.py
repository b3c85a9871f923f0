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
    count = f" ({line.messages} texts)" if line.messages > 1 else ""
    label = {
        "emergency": "EMERGENCY from ",
        "break_in": "stuck: ",
        "fallback": "needs a look: ",
        "unknown_number": "",
    }[line.kind]
    said = f': "{truncate(line.excerpt, DIGEST_EXCERPT_CHARS)}"' if line.excerpt else ""
    why = f" [{line.why}]" if line.why else ""
    return truncate(f"- {line.first_at:%H:%M} {label}{line.who}{count}{said}{why}", _LINE_CHARS)


def digest_page(hour: datetime, lines: Sequence[DigestLine], max_lines: int) -> str:
    """The digest page for ``hour``: who and why, a line each, at most ``max_lines`` of them."""
    ordered = sorted(lines, key=lambda x: (_ORDER[x.kind], x.first_at, x.subject))
    unknown = sum(1 for x in lines if x.kind == "unknown_number")
    other = len(lines) - unknown
    parts = []
    if unknown:
        parts.append(f"{unknown} number{'s' if unknown != 1 else ''} not in the directory")
    if other:
        parts.append(f"{other} page{'s' if other != 1 else ''} held back by the daily cap")
    head = (
        f"[INFO] maestro digest, {hour:%d %b %H:%M}-{hour + timedelta(hours=1):%H:%M} UTC: "
        f"{' and '.join(parts) or 'nothing'}. Unknown numbers are bound to no one: add them to "
        "the directory or reply to them yourself."
    )
    shown = [_line(x) for x in ordered[:max_lines]]
    rest = len(ordered) - len(shown)
    tail = [f"and {rest} more"] if rest > 0 else []
    return "\n".join([head, *shown, *tail])
