"""Guards: exact counters over a window decide when to break out instead of looping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from maestro.domain.guards import GuardConfig, evaluate_guard


def test_the_same_question_asked_twice_for_one_context_trips_the_repeat_guard() -> None:
    config = GuardConfig(window=10, repeat_count_gte=2)

    once = evaluate_guard(["ask_access_time"], config)
    twice = evaluate_guard(["ask_access_time", "ask_access_time"], config)

    assert once.tripped is False
    assert twice.tripped is True
    assert twice.triggers == ("repeat_count_gte",)
    assert twice.repeat_count == 2


def test_repeat_count_is_the_trailing_run_only() -> None:
    result = evaluate_guard(["a", "a", "a", "b", "a"], GuardConfig(window=10, repeat_count_gte=3))

    assert result.repeat_count == 1
    assert result.tripped is False


def test_flip_count_counts_adjacent_changes() -> None:
    config = GuardConfig(window=30, flip_count_gte=3)

    assert evaluate_guard(["list", "grid", "list", "list"], config).flip_count == 2
    flicker = evaluate_guard(["list", "grid", "list", "grid"], config)
    assert flicker.flip_count == 3
    assert flicker.triggers == ("flip_count_gte",)


@pytest.mark.parametrize(
    ("series", "expected"),
    [
        (["a", "b", "a", "b", "a"], 3),
        (["a", "b", "a", "c"], 0),
        (["a", "a", "a", "a"], 3),
        (["a"], 0),
    ],
)
def test_no_progress_counts_observations_since_the_last_new_value(
    series: list[str], expected: int
) -> None:
    assert evaluate_guard(series, GuardConfig(window=10, no_progress_gte=1)).no_progress == expected


def test_only_the_last_window_values_count() -> None:
    config = GuardConfig(window=3, repeat_count_gte=4, flip_count_gte=3, no_progress_gte=3)
    series = ["x", "y", "x", "y", "x", "y", "a", "b", "c"]

    result = evaluate_guard(series, config)

    # The old flip-flop is outside the window: a, b, c is fresh progress.
    assert result.observed == 3
    assert (result.repeat_count, result.flip_count, result.no_progress) == (1, 2, 0)
    assert result.tripped is False


def test_several_triggers_fire_together_in_config_order() -> None:
    config = GuardConfig(window=5, repeat_count_gte=2, flip_count_gte=1, no_progress_gte=2)

    result = evaluate_guard(["a", "b", "b", "b"], config)

    assert result.triggers == ("repeat_count_gte", "flip_count_gte", "no_progress_gte")


def test_an_empty_series_trips_nothing() -> None:
    result = evaluate_guard([], GuardConfig(window=5, repeat_count_gte=1, no_progress_gte=1))

    assert result.tripped is False
    assert result.triggers == ()
    assert (result.repeat_count, result.flip_count, result.no_progress) == (0, 0, 0)


@pytest.mark.parametrize(
    "kwargs",
    [{"window": 5}, {"window": 0, "repeat_count_gte": 2}, {"window": 5, "flip_count_gte": 0}],
)
def test_a_guard_needs_a_window_and_a_trigger(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValidationError):
        GuardConfig.model_validate(kwargs)


@given(
    series=st.lists(st.sampled_from("abc"), max_size=40),
    window=st.integers(1, 20),
    threshold=st.integers(1, 6),
)
def test_counters_stay_within_the_window(series: list[str], window: int, threshold: int) -> None:
    config = GuardConfig(
        window=window,
        repeat_count_gte=threshold,
        flip_count_gte=threshold,
        no_progress_gte=threshold,
    )
    result = evaluate_guard(series, config)
    size = min(len(series), window)

    assert result.observed == size
    assert result.flip_count <= max(size - 1, 0)
    assert result.no_progress <= max(size - 1, 0)
    assert (result.repeat_count >= 1) == (size > 0)
    # A trailing run adds nothing new after its first element.
    assert result.no_progress >= result.repeat_count - 1
    assert result.tripped == bool(result.triggers)
