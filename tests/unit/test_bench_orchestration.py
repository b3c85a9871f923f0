"""`make bench`'s cost-per-package benchmark: how the repeated small runs are pooled."""

from __future__ import annotations

from typing import Any

from bench_orchestration import pool


def _run(ended_at: float, wall: list[float], statuses: dict[str, int]) -> dict[str, Any]:
    return {
        "wall_ms": wall,
        "cpu_ms": [ms - 1 for ms in wall],
        "ended_at": ended_at,
        "wall_seconds": sum(wall) / 1000,
        "statuses": statuses,
    }


def test_only_the_runs_that_ended_alongside_the_large_one_are_pooled() -> None:
    runs = [
        _run(10.0, [200.0, 210.0], {"SUCCEEDED": 2}),
        _run(20.0, [220.0, 230.0], {"SUCCEEDED": 1, "FAILED": 1}),
        _run(30.0, [100.0, 100.0], {"SUCCEEDED": 2}),  # ended after: ran alone, faster
    ]
    pooled = pool(runs, until=25.0)
    assert pooled["wall_ms"] == [200.0, 210.0, 220.0, 230.0]
    assert pooled["cpu_ms"] == [199.0, 209.0, 219.0, 229.0]
    assert pooled["runs"] == 2
    assert pooled["statuses"] == {"SUCCEEDED": 3, "FAILED": 1}


def test_a_first_run_that_outlasted_the_large_one_is_still_counted() -> None:
    pooled = pool([_run(30.0, [250.0], {"SUCCEEDED": 1})], until=25.0)
    assert (pooled["wall_ms"], pooled["runs"]) == ([250.0], 1)
