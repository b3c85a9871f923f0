"""What every handler reads from its platform: the clock and the secrets."""

from __future__ import annotations

from typing import Protocol

from maestro.domain.common import AwareDatetime


class Clock(Protocol):
    def now(self) -> AwareDatetime: ...


class Secrets(Protocol):
    def get(self, name_or_arn: str) -> str:
        """The secret's value; settings hold names or ARNs, never values."""
