"""Small shared types for the domain models."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict

E164_PATTERN = re.compile(r"^\+[1-9]\d{6,14}$")


def _check_e164(value: str) -> str:
    if not E164_PATTERN.fullmatch(value):
        raise ValueError(f"phone number must be E.164 (+ then 7 to 15 digits), got {value!r}")
    return value


def _require_aware(value: datetime) -> datetime:
    # Naive datetimes make TTL arithmetic silently wrong across Lambdas in different zones.
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("datetimes must be timezone-aware")
    return value.astimezone(UTC)


E164 = Annotated[str, AfterValidator(_check_e164)]
"""A phone number in E.164 form, e.g. ``+14155550100``."""

AwareDatetime = Annotated[datetime, AfterValidator(_require_aware)]
"""A timezone-aware datetime, normalised to UTC."""


class Frozen(BaseModel):
    """Base for domain values: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


ELLIPSIS = "…"

_ZWJ = "\u200d"


def _continues_glyph(ch: str) -> bool:
    """True for a code point that attaches to the one before it (accent, joiner, selector)."""
    code = ord(ch)
    return (
        unicodedata.category(ch) in {"Mn", "Mc", "Me"}
        or ch == _ZWJ
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0x1F3FB <= code <= 0x1F3FF  # emoji skin-tone modifiers
    )


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in a visible "…" when cut.

    Cuts on code points and backs off so an accent or emoji joiner is never left dangling.
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    if len(text) <= limit:
        return text
    cut = limit - 1
    while cut > 0 and (_continues_glyph(text[cut]) or text[cut - 1] == _ZWJ):
        cut -= 1
    return text[:cut].rstrip() + ELLIPSIS
