"""`make bench`'s cost-per-package benchmark runs end to end on a few packages (its figures are
measured by `make bench`, never asserted here)."""

from __future__ import annotations

import pytest
from bench_orchestration import SCRIPT, run_child

pytestmark = pytest.mark.integration


def test_the_benchmark_runs_packages_through_one_stack_and_reads_its_memory() -> None:
    result = run_child(len(SCRIPT))
    assert result["count"] == len(SCRIPT)
    assert len(result["wall_ms"]) == len(result["cpu_ms"]) == len(SCRIPT)
    assert result["statuses"] == {"SUCCEEDED": len(SCRIPT)}  # one execution per package
    assert all(ms > 0 for ms in result["wall_ms"])
    assert result["rss_start_mb"] > 0
    assert result["rss_after_mb"] > 0
