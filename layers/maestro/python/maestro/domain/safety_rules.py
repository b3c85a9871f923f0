"""One rule of the safety floor, shared by its English (``safety``) and Spanish
(``safety_spanish``) rules: a pattern, what vetoes or must come with it, and a cheap trigger."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal, get_args

Category = Literal[
    "gas",
    "smoke_fire",
    "carbon_monoxide",
    "electrical",
    "flooding",
    "sewage",
    "no_heat_freezing",
    "break_in",
    "structural",
    "other",
]
Severity = Literal["emergency", "urgent"]

CATEGORIES: tuple[Category, ...] = get_args(Category)
"""Every category the floor can report, in declaration order."""

Negated = Callable[[str, int, int], bool]
"""Whether a hit at ``text[start:end]`` is negated or resolved, in the rule's language."""


@cache
def compiled(source: str, flags: int = 0) -> re.Pattern[str]:
    """``source`` compiled once per process, when first needed.

    Compiling every rule takes about 100 ms, so nothing is compiled at import: a cold start pays
    only for the patterns its first texts reach (a rule's main pattern only once its trigger
    matched).
    """
    return re.compile(source, flags)


def alt(*parts: str) -> str:
    return "(?:" + "|".join(parts) + ")"


@dataclass(frozen=True, slots=True)
class Rule:
    category: Category
    severity: Severity
    source: str
    # The rule is skipped when `veto` matches anywhere in the text (e.g. "battery" for alarms).
    veto_source: str | None = None
    # The rule fires only when `requires` also matches somewhere (e.g. "freezing" for no heat).
    requires_source: str | None = None
    # A cheap stem every match contains, checked first so most texts skip the slow pattern
    # (a test checks that each match holds its rule's trigger).
    trigger_source: str | None = None
    # The English rules ignore case; the Spanish ones read a lower-case sound spelling.
    flags: int = 0
    # Lower-case substrings one of which every match contains: a plain `in` check, far cheaper
    # than the trigger's regex search, that lets most texts skip even the trigger (a test checks
    # each match holds one).
    stems: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        category: Category,
        severity: Severity,
        *patterns: str,
        veto: str | None = None,
        requires: str | None = None,
        trigger: str | None = None,
        flags: int = 0,
        stems: tuple[str, ...] = (),
    ) -> Rule:
        """The rule that fires on any of ``patterns``."""
        return cls(
            category,
            severity,
            alt(*patterns),
            veto or None,
            requires or None,
            trigger or None,
            flags,
            stems,
        )

    @property
    def pattern(self) -> re.Pattern[str]:
        return compiled(self.source, self.flags)

    @property
    def veto(self) -> re.Pattern[str] | None:
        return None if self.veto_source is None else compiled(self.veto_source, self.flags)

    @property
    def requires(self) -> re.Pattern[str] | None:
        return None if self.requires_source is None else compiled(self.requires_source, self.flags)

    @property
    def trigger(self) -> re.Pattern[str] | None:
        return None if self.trigger_source is None else compiled(self.trigger_source, self.flags)

    def first_span(self, text: str, negated: Negated) -> tuple[int, int] | None:
        """The span of the first match in ``text`` that ``negated`` leaves standing, or ``None``
        when there is none or the text vetoes the rule or lacks what it requires."""
        if self.stems:
            lowered = text.lower()
            if not any(stem in lowered for stem in self.stems):
                return None
        if self.trigger is not None and not self.trigger.search(text):
            return None
        for match in self.pattern.finditer(text):
            start, end = match.span()
            if end == start or negated(text, start, end):
                continue
            # Whole-text conditions are checked only once a phrase matched: most texts never
            # get here.
            if self.veto is not None and self.veto.search(text):
                return None
            if self.requires is not None and not self.requires.search(text):
                return None
            return start, end
        return None


__all__ = ["CATEGORIES", "Category", "Negated", "Rule", "Severity", "alt", "compiled"]
