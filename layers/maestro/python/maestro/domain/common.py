"""Small shared types for the domain models."""

from __future__ import annotations

import re
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

    model_config = ConfigDict(frozen=True, extra="forbid")
