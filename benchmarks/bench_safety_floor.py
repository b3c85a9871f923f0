"""Measure the deterministic safety floor: false raises, recall, hard negatives, throughput.

Run from the repo root: ``.venv/bin/python benchmarks/bench_safety_floor.py [--show]``.
``--show`` prints every CLINC150 text that fires and every development-set emergency that is
missed. The holdouts (the first, ``holdout_*.jsonl``; the fifth, ``holdout5_*.jsonl``; and
``spanish_holdout.jsonl``, when present) are reported as figures only: their misses are printed
with ``--show-holdout`` alone, because a holdout whose misses are read while the rules change is
a tuning set from then on (see evals/labeled/README.md). ``--skip-holdout holdout5`` leaves the
fifth unopened. The spent holdouts (``holdout2``, ``holdout3``, ``holdout4``) are development
sets.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from _results import merge_results

from maestro.domain.safety import safety_floor

REPO = Path(__file__).resolve().parents[1]
CLINC = REPO / ".." / "shared" / "data" / "clinc150" / "clinc150_train_val.json"
LABELED = REPO / "evals" / "labeled"
EMERGENCIES = LABELED / "emergencies.jsonl"
NON_EMERGENCIES = LABELED / "non_emergencies.jsonl"
TUNING = LABELED / "tuning_emergencies.jsonl"
TUNING2 = LABELED / "tuning2_emergencies.jsonl"
TUNING2_NEGATIVES = LABELED / "tuning2_non_emergencies.jsonl"
TUNING3 = LABELED / "tuning3_emergencies.jsonl"
TUNING3_NEGATIVES = LABELED / "tuning3_non_emergencies.jsonl"
TUNING4 = LABELED / "tuning4_emergencies.jsonl"
TUNING4_NEGATIVES = LABELED / "tuning4_non_emergencies.jsonl"
TUNING5 = LABELED / "tuning5_emergencies.jsonl"
TUNING5_NEGATIVES = LABELED / "tuning5_non_emergencies.jsonl"
TUNING6 = LABELED / "tuning6_emergencies.jsonl"
TUNING6_NEGATIVES = LABELED / "tuning6_non_emergencies.jsonl"
TUNING7 = LABELED / "tuning7_emergencies.jsonl"
TUNING7_NEGATIVES = LABELED / "tuning7_non_emergencies.jsonl"
TUNING8 = LABELED / "tuning8_emergencies.jsonl"
TUNING8_NEGATIVES = LABELED / "tuning8_non_emergencies.jsonl"
SPANISH_HOLDOUT = LABELED / "spanish_holdout.jsonl"
HOLDOUT = LABELED / "holdout_emergencies.jsonl"
HOLDOUT_NEGATIVES = LABELED / "holdout_non_emergencies.jsonl"
# A second holdout, written by another writer who never read the rules, after the first had been
# measured four times (each after rules chosen from its counts); spent on 2026-12-02 (its misses
# read, trained on since): a development set.
HOLDOUT2 = LABELED / "holdout2_emergencies.jsonl"
HOLDOUT2_NEGATIVES = LABELED / "holdout2_non_emergencies.jsonl"
# A third holdout, written blind by another writer while the second round of the learned half
# was trained; measured once (94/120, 6/50), spent on 2026-12-02: a development set since.
HOLDOUT3 = LABELED / "holdout3_emergencies.jsonl"
HOLDOUT3_NEGATIVES = LABELED / "holdout3_non_emergencies.jsonl"
# A fourth holdout, written blind while the seventh round was trained; measured once (108/120,
# 9/50), spent in the eighth round: a development set since.
HOLDOUT4 = LABELED / "holdout4_emergencies.jsonl"
HOLDOUT4_NEGATIVES = LABELED / "holdout4_non_emergencies.jsonl"
# A fifth holdout, written blind while the eighth round was trained; measured once after it
# (111/120, 3/50). Figures only until it is spent.
HOLDOUT5 = LABELED / "holdout5_emergencies.jsonl"
HOLDOUT5_NEGATIVES = LABELED / "holdout5_non_emergencies.jsonl"


# The third holdout's writer named four categories their own way; a hit "matches the label"
# when it names the floor's category for it.
_FLOOR_CATEGORY = {
    "co": "carbon_monoxide",
    "fire": "smoke_fire",
    "security": "break_in",
    "no_heat": "no_heat_freezing",
}


def _load_clinc() -> list[str]:
    if not CLINC.exists():
        sys.exit(f"CLINC150 not found at {CLINC.resolve()} (expected shared/ beside the repo)")
    data: dict[str, list[list[str]]] = json.loads(CLINC.read_text(encoding="utf-8"))
    return [row[0] for split in ("train", "val", "oos_train", "oos_val") for row in data[split]]


def _load_jsonl(path: Path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _share(found: int, total: int) -> str:
    return f"{found}/{total} = {found / total:.1%}" if total else "0/0"


def _figure(found: int, total: int) -> dict[str, float | int]:
    return {"found": found, "total": total, "rate": round(found / total, 4) if total else 0.0}


def _report_recall(
    path: Path, rows: list[dict[str, str]], show_misses: bool
) -> dict[str, float | int]:
    """Recall overall, per category and, where rows carry one, per ``kind``."""
    total: Counter[str] = Counter()
    found: Counter[str] = Counter()
    kind_total: Counter[str] = Counter()
    kind_found: Counter[str] = Counter()
    same_category = 0
    misses: list[dict[str, str]] = []
    for row in rows:
        category = row.get("category", "?")
        kind = row.get("kind", "(none)")
        total[category] += 1
        kind_total[kind] += 1
        hit = safety_floor(row["text"])
        if hit is None:
            misses.append(row)
            continue
        found[category] += 1
        kind_found[kind] += 1
        same_category += hit.category == _FLOOR_CATEGORY.get(category, category)
    n_found = sum(found.values())
    print(f"Recall on {path.name}: {_share(n_found, len(rows))}")
    for kind in sorted(kind_total) if set(kind_total) != {"(none)"} else ():
        print(f"    kind {kind:<13} {_share(kind_found[kind], kind_total[kind])}")
    for category in sorted(total):
        print(f"    {category:<18} {found[category]:>3}/{total[category]:<3}")
    print(f"    hits whose category matches the label: {same_category}/{n_found}")
    if show_misses:
        for row in misses:
            kind = f"/{row['kind']}" if "kind" in row else ""
            print(f"    MISSED [{row.get('category', '?')}{kind}] {row['text']!r}")
    return _figure(n_found, len(rows))


def _report_false_raises(
    path: Path, rows: list[dict[str, str]], show: bool, target: str
) -> dict[str, float | int]:
    raised = [(row["text"], hit) for row in rows if (hit := safety_floor(row["text"]))]
    print(f"False raises on {path.name}: {_share(len(raised), len(rows))}{target}")
    if show:
        for text, hit in raised:
            print(f"    [{hit.category}/{hit.severity}] {hit.phrase!r} <- {text!r}")
    return _figure(len(raised), len(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show", action="store_true", help="print false raises and misses")
    parser.add_argument(
        "--show-holdout",
        action="store_true",
        help="also print the holdout's misses and false raises (after its one measurement only)",
    )
    parser.add_argument(
        "--skip-holdout",
        action="append",
        default=[],
        metavar="NAME",
        help="neither open nor measure this holdout (holdout, holdout5): a run made while a "
        "holdout is still being written, or before its one measurement",
    )
    args = parser.parse_args()

    clinc = _load_clinc()
    raised = [(text, hit) for text in clinc if (hit := safety_floor(text)) is not None]
    rate = len(raised) / len(clinc)
    print(f"CLINC150 false raises: {len(raised)}/{len(clinc)} = {rate:.4%} (target <= 0.1%)")
    if args.show:
        for text, hit in raised:
            print(f"    [{hit.category}/{hit.severity}] {hit.phrase!r} <- {text!r}")

    # Development sets: the rules were tuned while looking at these.
    figures: dict[str, dict[str, float | int]] = {
        "clinc150_false_raises": _figure(len(raised), len(clinc))
    }
    rows = _load_jsonl(EMERGENCIES)
    figures["recall_development"] = _report_recall(EMERGENCIES, rows, args.show)
    tuning = _load_jsonl(TUNING)
    figures["recall_tuning"] = _report_recall(TUNING, tuning, args.show)
    tuning2 = _load_jsonl(TUNING2)
    figures["recall_tuning2"] = _report_recall(TUNING2, tuning2, args.show)
    tuning3 = _load_jsonl(TUNING3)
    figures["recall_tuning3"] = _report_recall(TUNING3, tuning3, args.show)
    tuning4 = _load_jsonl(TUNING4)
    figures["recall_tuning4"] = _report_recall(TUNING4, tuning4, args.show)
    figures["recall_tuning5"] = _report_recall(TUNING5, _load_jsonl(TUNING5), args.show)
    figures["recall_tuning6"] = _report_recall(TUNING6, _load_jsonl(TUNING6), args.show)
    figures["recall_tuning7"] = _report_recall(TUNING7, _load_jsonl(TUNING7), args.show)
    figures["recall_holdout2"] = _report_recall(HOLDOUT2, _load_jsonl(HOLDOUT2), args.show)
    figures["recall_holdout3"] = _report_recall(HOLDOUT3, _load_jsonl(HOLDOUT3), args.show)
    figures["recall_holdout4"] = _report_recall(HOLDOUT4, _load_jsonl(HOLDOUT4), args.show)
    figures["recall_tuning8"] = _report_recall(TUNING8, _load_jsonl(TUNING8), args.show)
    negatives = _load_jsonl(NON_EMERGENCIES)
    figures["false_raises_development"] = _report_false_raises(
        NON_EMERGENCIES, negatives, show=True, target=" (target <= 10%)"
    )
    figures["false_raises_tuning2"] = _report_false_raises(
        TUNING2_NEGATIVES, _load_jsonl(TUNING2_NEGATIVES), show=True, target=" (target <= 5%)"
    )
    figures["false_raises_tuning3"] = _report_false_raises(
        TUNING3_NEGATIVES, _load_jsonl(TUNING3_NEGATIVES), show=True, target=" (target <= 5%)"
    )
    figures["false_raises_tuning4"] = _report_false_raises(
        TUNING4_NEGATIVES, _load_jsonl(TUNING4_NEGATIVES), show=True, target=" (target <= 5%)"
    )
    for name, path in (
        ("tuning5", TUNING5_NEGATIVES),
        ("tuning6", TUNING6_NEGATIVES),
        ("tuning7", TUNING7_NEGATIVES),
        ("holdout2", HOLDOUT2_NEGATIVES),
        ("holdout3", HOLDOUT3_NEGATIVES),
        ("holdout4", HOLDOUT4_NEGATIVES),
        ("tuning8", TUNING8_NEGATIVES),
    ):
        figures[f"false_raises_{name}"] = _report_false_raises(
            path, _load_jsonl(path), show=True, target=""
        )

    # The holdouts: written by someone else, never trained on.
    for suffix, emergencies, look_alikes in (
        ("holdout", HOLDOUT, HOLDOUT_NEGATIVES),
        ("holdout5", HOLDOUT5, HOLDOUT5_NEGATIVES),
    ):
        if suffix in args.skip_holdout:
            print(f"{suffix}: skipped (--skip-holdout)")
            continue
        for path in (emergencies, look_alikes):
            if not path.exists():
                print(f"{path.name}: holdout not present")
                continue
            holdout = _load_jsonl(path)
            if path == emergencies:
                figures[f"recall_{suffix}"] = _report_recall(path, holdout, args.show_holdout)
            else:
                figures[f"false_raises_{suffix}"] = _report_false_raises(
                    path, holdout, show=args.show_holdout, target=""
                )

    # The Spanish holdout: emergencies and look-alikes in one file, measured once, never tuned on.
    if SPANISH_HOLDOUT.exists():
        spanish = _load_jsonl(SPANISH_HOLDOUT)
        figures["recall_spanish_holdout"] = _report_recall(
            SPANISH_HOLDOUT,
            [row for row in spanish if row["category"] != "none"],
            args.show_holdout,
        )
        figures["false_raises_spanish_holdout"] = _report_false_raises(
            SPANISH_HOLDOUT,
            [row for row in spanish if row["category"] == "none"],
            show=args.show_holdout,
            target="",
        )

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
    merge_results({"safety_floor": {**figures, "texts_per_second": round(per_second)}})


if __name__ == "__main__":
    main()
