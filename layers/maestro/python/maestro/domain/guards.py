"""Deterministic alarms over a signal window (seed 003's guard state), and the conversation's
guards built on them.

A guard gates the model: it runs only when a cheap, exact counter says the flow is stuck. In
maestro the signal is, for example, the question asked for one context, so "the same question asked
twice for the same context" (``repeat_count_gte=2``) breaks out to the PM instead of looping.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
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


# ---------------------------------------------------------------------------------------------
# The conversation's guards: maestro must not loop on a party. Each package leaves one signal in
# the trail (what maestro did with it); before asking again, the trail is checked.
# ---------------------------------------------------------------------------------------------

BREAK_IN = "break_in"
PROGRESS = "progress"
REPLY = "reply"
SOFT = "soft"
ESCALATE = "escalate"


class TrailEntry(Frozen):
    """What maestro did with one package of the conversation, as a guard signal."""

    package_id: str
    at: datetime
    signal: str = Field(
        description="ask:<candidates> | hold:<op>:<ids> | reply | soft | progress | escalate | "
        "break_in"
    )
    line: str = Field(default="", max_length=200, description="For the PM's page")


class ConversationGuards(Frozen):
    """When maestro stops asking and brings the PM in (seed 003's guard state, per party).

    - repeat: the same question was asked the last ``repeat_asks`` times in a row;
    - flip: the last asks alternate between two questions (A, B, A, B);
    - no progress: ``no_progress`` packages in a row got only questions and replies.
    Only entries within ``window`` count, so an old loop that resolved cannot trip it now.
    """

    window: timedelta = timedelta(hours=12)
    repeat_asks: int = Field(default=2, ge=1)
    flip_length: int = Field(default=4, ge=3)
    no_progress: int = Field(default=6, ge=2)


class GuardVerdict(Frozen):
    tripped: Literal["repeat", "flip", "no_progress"] | None = None
    already_broken_in: bool = Field(
        default=False, description="The PM was brought in already and nothing moved since"
    )
    reason: str = ""


def _asks(signal: str) -> bool:
    return signal.startswith(("ask:", "hold:"))


def guard_before_asking(
    trail: Sequence[TrailEntry], asking: str, now: datetime, config: ConversationGuards
) -> GuardVerdict:
    """Whether asking ``asking`` now (a question's signal) must become a break-in instead."""
    recent = [e for e in trail if now - e.at <= config.window and e.signal != SOFT]
    since_progress: list[TrailEntry] = []
    for entry in recent:
        since_progress = [] if entry.signal in (PROGRESS, ESCALATE) else [*since_progress, entry]
    already = any(e.signal == BREAK_IN for e in since_progress)
    signals = [e.signal for e in since_progress if e.signal != BREAK_IN] + [asking]

    repeat = evaluate_guard(
        signals, GuardConfig(window=config.repeat_asks + 1, repeat_count_gte=config.repeat_asks + 1)
    )
    if repeat.tripped:
        return GuardVerdict(
            tripped="repeat",
            already_broken_in=already,
            reason=f"the same question would be asked a {repeat.repeat_count}th time in a row",
        )
    tail = signals[-config.flip_length :]
    if (
        len(tail) == config.flip_length
        and all(_asks(s) for s in tail)
        and len(set(tail)) == 2
        and flip_count(tail) == config.flip_length - 1
    ):
        return GuardVerdict(
            tripped="flip",
            already_broken_in=already,
            reason="the questions flip between two readings",
        )
    stalled = signals[-config.no_progress :]
    if len(stalled) == config.no_progress and all(_asks(s) or s == REPLY for s in stalled):
        return GuardVerdict(
            tripped="no_progress",
            already_broken_in=already,
            reason=f"{config.no_progress} packages in a row without progress",
        )
    return GuardVerdict(already_broken_in=already)
