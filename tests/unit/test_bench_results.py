"""`make bench`'s results file: each benchmark merges its keys, none erases another's."""

from __future__ import annotations

import json
from pathlib import Path

from _results import merge_results

IMPORTS = {
    "handler_import_ms": {"inbound_sms": 300.0, "act": 330.0},
    "import_baseline_ms": 300.0,
    "handler_import_limit": {"inbound_sms": 1.1, "act": 1.25},
    "import_runs": 5,
}
MODEL = {
    "model_calls_per_package": {"clear": 3, "ambiguous": 6},
    "prompt_tokens_by_history": {"10": 4000, "100": 4400, "1000": 4400, "10000": 4400},
    "prompt_tokens_method": "characters / 4",
    "window_build_ms_by_history": {"10": 1.0, "100": 1.0, "1000": 1.1, "10000": 1.1},
    "window_reads_on_moto_ms": {"100": 5.0, "10000": 80.0},
}


def test_a_benchmark_keeps_the_figures_of_the_others(tmp_path: Path) -> None:
    merge_results(MODEL, out=tmp_path)
    merge_results(IMPORTS, out=tmp_path)
    merge_results({"import_baseline_ms": 310.0}, out=tmp_path)  # a rerun updates its own key
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved == {**MODEL, **IMPORTS, "import_baseline_ms": 310.0}
    markdown = (tmp_path / "results.md").read_text()
    assert "clear (the reasoning samples agree): **3** calls" in markdown
    assert "| act | 330.0 | 1.06x | 1.25x ok |" in markdown
    assert "| inbound_sms | 300.0 | 0.97x | 1.10x ok |" in markdown


def test_an_unknown_key_is_shown_raw_and_a_torn_file_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text('{"model_calls_per_pack')  # an interrupted write
    merged = merge_results({"demo_wall_seconds": 4.2}, out=tmp_path)
    assert merged == {"demo_wall_seconds": 4.2}
    markdown = (tmp_path / "results.md").read_text()
    assert "### demo_wall_seconds" in markdown
    assert "4.2" in markdown


ORCHESTRATION = {
    "orchestration_ms": {
        "50": {"median": 250.0, "p95": 560.0},
        "500": {"median": 255.0, "p95": 600.0},
    },
    "orchestration_runs": {"50": 8, "500": 1},
    "orchestration_tail_ms": {"median": 258.0, "p95": 610.0},
    "orchestration_cpu_ms": {"first_50": 240.0, "last_50": 245.0},
    "rss_mb": {"start": 200.0, "after_500": 300.0},
    "orchestration_limits": {
        "p95_ratio": 1.071,
        "p95_ratio_limit": 1.15,
        "rss_growth_mb": 100.0,
        "rss_growth_limit_mb": 150.0,
    },
}


def test_the_orchestration_figures_are_shown_as_a_table_with_their_limits(tmp_path: Path) -> None:
    merge_results(ORCHESTRATION, out=tmp_path)
    markdown = (tmp_path / "results.md").read_text()
    assert "## Cost per package on the embedded stack" in markdown
    assert "| 50 | 8 | 250.0 | 560.0 |" in markdown
    assert "| 500 | 1 | 255.0 | 600.0 |" in markdown
    assert "| the last 50 of 500 | 1 | 258.0 | 610.0 |" in markdown
    assert "**1.071** (limit 1.15, ok)" in markdown
    assert "300.0 MB after 500 packages: **100.0 MB** more (limit 150.0, ok)" in markdown
    assert "## Other figures" not in markdown  # every key has its section
    over = {**ORCHESTRATION["orchestration_limits"], "p95_ratio": 1.2}
    merge_results({"orchestration_limits": over}, out=tmp_path)
    assert "**1.2** (limit 1.15, **over**)" in (tmp_path / "results.md").read_text()
