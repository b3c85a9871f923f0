"""Deterministic alarms over a signal window (seed 003's guard state).

A guard gates the model: it runs only when a cheap, exact counter says the flow is stuck. In
maestro the signal is, for example, the question asked for one context, so "the same question asked
twice for the same context" (``repeat_count_gte=2``) breaks out to the PM instead of looping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field, model_validator

from maestro.domain.common import Frozen

TriggerName = Literal["repeat_count_gte", "flip_count_gte", "no_progress_gte"]


class GuardConfig(Frozen):
    """Which counters trip the guard, over the last ``window`` observations.

    Each trigger fires when its counter is greater than or equal to the threshold; a trigger left
    as ``None`` is off. At least one must be set, or the guard could never fire.
    """

    window: int = Field(ge=1)
    repeat_count_gte: int | None = Field(default=None, ge=1)
    flip_count_gte: int | None = Field(default=None, ge=1)
    no_progress_gte: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _needs_a_trigger(self) -> GuardConfig:
        triggers = (self.repeat_count_gte, self.flip_count_gte, self.no_progress_gte)
        if all(threshold is None for threshold in triggers):
            raise ValueError("a guard needs at least one trigger")
        return self


class GuardResult(Frozen):
    """The counters over the window and which triggers fired (in config order)."""

    tripped: bool
    triggers: tuple[TriggerName, ...]
    repeat_count: int = Field(ge=0)
    flip_count: int = Field(ge=0)
    no_progress: int = Field(ge=0)
    observed: int = Field(ge=0, description="How many observations the window held")


def repeat_count(window: Sequence[str]) -> int:
    """Length of the trailing run of equal values: ``[a, b, b]`` → 2, ``[]`` → 0."""
    if not window:
        return 0
    last = window[-1]
    run = 0
    for value in reversed(window):
        if value != last:
            break
        run += 1
    return run


def flip_count(window: Sequence[str]) -> int:
    """Number of adjacent changes (``v[i] != v[i-1]``): ``[a, b, a, a]`` → 2."""
    return sum(1 for i in range(1, len(window)) if window[i] != window[i - 1])


def no_progress(window: Sequence[str]) -> int:
    """Observations since a value never seen before in the window last appeared.

    Progress means something new happened; ``[a, b, a, b, a]`` last saw a new value at index 1, so
    it is 3; a brand-new last value gives 0; ``[]`` gives 0.
    """
    seen: set[str] = set()
    last_new = -1
    for index, value in enumerate(window):
        if value not in seen:
            seen.add(value)
            last_new = index
    if last_new < 0:
        return 0
    return len(window) - 1 - last_new


def evaluate_guard(series: Sequence[str], config: GuardConfig) -> GuardResult:
    """Count over the last ``config.window`` values of ``series`` and report which triggers fire.

    Older values are ignored, so an old loop that has since resolved cannot keep the alarm on. An
    empty series trips nothing.
    """
    window = list(series[-config.window :]) if series else []
    counts: dict[TriggerName, int] = {
        "repeat_count_gte": repeat_count(window),
        "flip_count_gte": flip_count(window),
        "no_progress_gte": no_progress(window),
    }
    thresholds: dict[TriggerName, int | None] = {
        "repeat_count_gte": config.repeat_count_gte,
        "flip_count_gte": config.flip_count_gte,
        "no_progress_gte": config.no_progress_gte,
    }
    # Thresholds are >= 1 and every counter of an empty window is 0, so nothing fires on [].
    fired = tuple(
        name
        for name, threshold in thresholds.items()
        if threshold is not None and counts[name] >= threshold
    )
    return GuardResult(
        tripped=bool(fired),
        triggers=fired,
        repeat_count=counts["repeat_count_gte"],
        flip_count=counts["flip_count_gte"],
        no_progress=counts["no_progress_gte"],
        observed=len(window),
    )
