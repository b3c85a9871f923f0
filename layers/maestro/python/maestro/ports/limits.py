"""What keeps maestro's spending bounded: the page throttle, the daily caps, the model budget."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import Field

from maestro.domain.common import AwareDatetime, Frozen


class PageWindow(Frozen):
    """A page-throttle window as stored: who holds it, and what the holder did (the page it
    sent, or the digest hour it went to instead), once it has said so."""

    claimant: str
    until: AwareDatetime
    page_sid: str | None = None
    paged_at: AwareDatetime | None = None
    digest_hour: AwareDatetime | None = Field(
        default=None, description="Set instead of a page: the holder became a digest line"
    )


class PageThrottle(Protocol):
    """At most one page per key per window (e.g. one emergency page per unknown number per 30
    minutes); later packages fold into the page that went out."""

    def claim(self, key: str, claimant: str, at: AwareDatetime, window_seconds: int) -> str | None:
        """Claim the window for ``key``: None when ``claimant`` holds it (page now; a re-run of
        the same claimant holds it too), else the claimant that does (attach to its page)."""

    def window(self, key: str) -> PageWindow | None:
        """The window for ``key`` as stored (None when there is none), expired or not."""

    def record(
        self,
        key: str,
        claimant: str,
        *,
        page_sid: str | None = None,
        paged_at: AwareDatetime | None = None,
        digest_hour: AwareDatetime | None = None,
    ) -> None:
        """Note on ``claimant``'s window what it did; nothing when another holds it now."""


CapName = Literal["pages", "texts", "model_calls"]
"""The account-wide daily caps (per UTC day)."""


class DailyCaps(Protocol):
    """Account-wide counters per UTC day of pages and texts sent (model calls are counted by
    the model budget, on the same counters)."""

    def charge(self, cap: CapName, key: str, at: AwareDatetime, *, force: bool = False) -> bool:
        """Count one send against today's ``cap``, once per ``key`` (a re-run of the same send
        counts nothing more and gets the first answer). False when the cap is reached: nothing
        is counted and the send must not go. ``force`` counts it even past the cap (what a cap
        never drops: an emergency page, safety advice) and answers True."""


class BudgetScope(Frozen):
    """Whom a model call is charged to: the conversation always, the package when there is one
    (the probe runs before any package exists)."""

    conversation_id: str
    package_id: str | None = None


class ModelBudget(Protocol):
    """Caps on model calls and tokens, per package and per conversation (per day), and the
    judgments' own per conversation per day."""

    def reserve(self, scope: BudgetScope, at: AwareDatetime) -> bool:
        """Take one call from every cap of ``scope``; False (nothing taken) when one is spent."""

    def record_tokens(self, scope: BudgetScope, at: AwareDatetime, tokens: int) -> None:
        """Count what a call used (a cap reached by tokens refuses the next reserve)."""

    def reserve_judgments(self, scope: BudgetScope, at: AwareDatetime, calls: int) -> bool:
        """Take ``calls`` at once (one judgment's samples) from the conversation's allowance for
        bounded judgments on ``at``'s UTC day; False, nothing taken, when they do not fit. Each
        call is then charged by ``reserve`` too, like any other."""
