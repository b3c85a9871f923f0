"""Work-order references in a person's words: "WO-204", "wo 204", "work order #204", "#204", or
a bare "204" in a short command ("pls cancel 204").

What they give is a list of ids to look up or to match against open contexts, never a target by
itself: an id found here that is not one of the sender's is refused or asked about, not guessed.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["MAX_REFS", "WO_PREFIX", "WoRef", "wo_ref_spans", "wo_refs"]

WO_PREFIX = "WO-"
MAX_REFS = 4
"""At most this many per text: each is one read of the store, and no command names more."""

# "WO-204", "wo 204", "wo#204", "work order 204": the tail holds a digit ("wo is" is no id).
_PREFIXED = re.compile(
    r"(?<![\w-])(?:wo|work\s*order)\s*[-#:]?\s*#?([0-9a-z]*\d[0-9a-z]*)(?![\w-])", re.IGNORECASE
)
# "#204" or a bare "204": digits only, two or more, not a time, a price, a date or a phone. A
# comma or a stop after it ends a sentence ("kill 205, tenant moved out"), unless a digit
# follows ("1,500", "12.30").
_BARE = re.compile(
    r"(?<![\w$.,:/#-])#?(\d{2,8})(?![\w%/-]|[.,]\d|:\d|\s*(?:am|pm|a\.m|p\.m)\b)",
    re.IGNORECASE,
)


class WoRef(NamedTuple):
    """One reference: the id it names, where it is in the text, and whether it was a bare number
    (weaker: "the tenant in 305" names no work order)."""

    wo_id: str
    start: int
    end: int
    bare: bool


def wo_ref_spans(text: str) -> list[WoRef]:
    """Every reference in ``text``, in order (an id named twice, twice)."""
    prefixed = [
        WoRef(f"{WO_PREFIX}{m.group(1).upper()}", m.start(), m.end(), False)
        for m in _PREFIXED.finditer(text)
    ]
    bare = [
        WoRef(f"{WO_PREFIX}{m.group(1)}", m.start(), m.end(), not m.group(0).startswith("#"))
        for m in _BARE.finditer(text)
        if not any(r.start <= m.start() < r.end for r in prefixed)
    ]
    return sorted([*prefixed, *bare], key=lambda r: r.start)


def wo_refs(text: str, limit: int = MAX_REFS, *, bare: bool = True) -> tuple[str, ...]:
    """The work-order ids ``text`` seems to name, normalised ("WO-204"), in order, unique;
    without the bare numbers unless ``bare``."""
    ids = dict.fromkeys(r.wo_id for r in wo_ref_spans(text) if bare or not r.bare)
    return tuple(ids)[:limit]
