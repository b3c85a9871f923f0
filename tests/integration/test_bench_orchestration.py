"""`make bench`'s cost-per-package benchmark runs end to end on a few packages (its figures are
measured by `make bench`, never asserted here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bench_orchestration
import pytest
from bench_orchestration import SCRIPT, run_child, run_repeated

pytestmark = pytest.mark.integration


@pytest.mark.slow
def test_the_benchmark_runs_packages_through_one_stack_and_reads_its_memory() -> None:
    result = run_child(len(SCRIPT))
    assert result["count"] == len(SCRIPT)
    assert len(result["wall_ms"]) == len(result["cpu_ms"]) == len(SCRIPT)
    assert result["statuses"] == {"SUCCEEDED": len(SCRIPT)}  # one execution per package
    assert all(ms > 0 for ms in result["wall_ms"])
    assert result["rss_start_mb"] > 0
    assert result["rss_after_mb"] > 0


def test_the_repeated_runs_stop_at_the_stop_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = tmp_path / "stop"
    real = bench_orchestration.run_child

    def once(count: int, warm_up: bool = True) -> dict[str, Any]:
        result = real(count, warm_up=False)
        stop.touch()  # as the parent does when the large run ends
        return result

    monkeypatch.setattr(bench_orchestration, "run_child", once)
    monkeypatch.setattr(bench_orchestration, "_warm_up", lambda: None)
    result = run_repeated(3, stop)
    assert [run["statuses"] for run in result["runs"]] == [{"SUCCEEDED": 3}]
