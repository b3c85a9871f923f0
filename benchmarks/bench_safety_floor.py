"""Measure the deterministic safety floor: false raises, recall, hard negatives, throughput.

Run from the repo root: ``.venv/bin/python benchmarks/bench_safety_floor.py [--show]``.
``--show`` prints every CLINC150 text that fires and every labelled emergency that is missed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from maestro.domain.safety import safety_floor

REPO = Path(__file__).resolve().parents[1]
CLINC = REPO / ".." / "shared" / "data" / "clinc150" / "clinc150_train_val.json"
EMERGENCIES = REPO / "evals" / "labeled" / "emergencies.jsonl"
NON_EMERGENCIES = REPO / "evals" / "labeled" / "non_emergencies.jsonl"


def _load_clinc() -> list[str]:
    if not CLINC.exists():
        sys.exit(f"CLINC150 not found at {CLINC.resolve()} (expected shared/ beside the repo)")
    data: dict[str, list[list[str]]] = json.loads(CLINC.read_text(encoding="utf-8"))
    return [row[0] for split in ("train", "val", "oos_train", "oos_val") for row in data[split]]


def _load_jsonl(path: Path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show", action="store_true", help="print false raises and misses")
    args = parser.parse_args()

    clinc = _load_clinc()
    raised = [(text, hit) for text in clinc if (hit := safety_floor(text)) is not None]
    rate = len(raised) / len(clinc)
    print(f"CLINC150 false raises: {len(raised)}/{len(clinc)} = {rate:.4%} (target <= 0.5%)")
    if args.show:
        for text, hit in raised:
            print(f"    [{hit.category}/{hit.severity}] {hit.phrase!r} <- {text!r}")

    rows = _load_jsonl(EMERGENCIES)
    total: Counter[str] = Counter()
    found: Counter[str] = Counter()
    same_category = 0
    misses: list[dict[str, str]] = []
    for row in rows:
        total[row["category"]] += 1
        hit = safety_floor(row["text"])
        if hit is None:
            misses.append(row)
            continue
        found[row["category"]] += 1
        same_category += hit.category == row["category"]
    n_found = sum(found.values())
    print(f"Recall on {EMERGENCIES.name}: {n_found}/{len(rows)} = {n_found / len(rows):.1%}")
    for category in sorted(total):
        print(f"    {category:<18} {found[category]:>3}/{total[category]:<3}")
    print(f"    hits whose category matches the label: {same_category}/{n_found}")
    if args.show:
        for row in misses:
            print(f"    MISSED [{row['category']}] {row['text']!r}")

    negatives = _load_jsonl(NON_EMERGENCIES)
    neg_raised = [(row["text"], hit) for row in negatives if (hit := safety_floor(row["text"]))]
    print(
        f"Hard negatives raised: {len(neg_raised)}/{len(negatives)} = "
        f"{len(neg_raised) / len(negatives):.1%} (target <= 10%)"
    )
    for text, hit in neg_raised:
        print(f"    [{hit.category}/{hit.severity}] {hit.phrase!r} <- {text!r}")

    corpus = clinc + [row["text"] for row in rows] + [row["text"] for row in negatives]
    rounds = 3
    began = time.perf_counter()
    for _ in range(rounds):
        for text in corpus:
            safety_floor(text)
    elapsed = time.perf_counter() - began
    per_second = rounds * len(corpus) / elapsed
    print(
        f"Throughput: {per_second:,.0f} texts/s "
        f"({elapsed / (rounds * len(corpus)) * 1e6:.1f} µs per text, "
        f"{rounds} x {len(corpus)} texts)"
    )


if __name__ == "__main__":
    main()
