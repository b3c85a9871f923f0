"""benchmarks/floor_at.py: an earlier commit's safety floor, run on today's labeled files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from floor_at import ROOT, measure


def _jsonl(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"text": text}) + "\n" for text in texts), encoding="utf-8")
    return path


def test_the_floor_of_a_commit_counts_what_it_raised_per_file(tmp_path: Path) -> None:
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    emergencies = _jsonl(
        tmp_path / "emergencies.jsonl",
        [
            "I smell gas in the hallway and the stove is off",
            "there's smoke coming out of the outlet",
        ],
    )
    routine = _jsonl(tmp_path / "routine.jsonl", ["can someone fix the squeaky cabinet door"])

    figures = measure(head, [emergencies, routine])

    assert figures == [
        {"file": str(emergencies), "rows": 2, "raised": 2},
        {"file": str(routine), "rows": 1, "raised": 0},
    ]
