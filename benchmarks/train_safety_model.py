"""Train the safety floor's learned half (``maestro/domain/safety_model.py``) and write its weights.

Run from the repo root: ``.venv/bin/python benchmarks/train_safety_model.py [--check]``.

Trains on the development sets only, named one by one below (never a glob: the holdouts sit in
the same folder and must stay unread, see evals/labeled/README.md): the emergencies of
``emergencies.jsonl``, the tuning sets and the spent holdouts (2, 3) are the positives; their
look-alikes, the routine and routing sets and CLINC150's 18,200 everyday requests the negatives.
Two logistic regressions (scikit-learn, liblinear, fixed seeds, so a rerun writes the same file
byte for byte) over the runtime's own features (``safety_model.features``: n-grams, negated
words, a length band and the ideas of ``safety_concepts``): one says emergency or not, one
which category. Each keeps its strongest weights only (the file stays small) and is scored
afterwards exactly as the runtime scores it.

The threshold is chosen by 5-fold cross-validation at a fixed false-raise budget (below: the
texts the model raises that no rule does, out of fold, at most 0.05 % of CLINC150, 1.8 % of all
look-alikes pooled and 5 % of each look-alike file): the lowest threshold that keeps it, never
below ``THRESHOLD_FLOOR``. Files whose names begin "holdout" are refused unless spent. The
honest estimate is leave-one-set-out: each development set (with its look-alikes) is held out in
turn, the whole procedure (threshold included) is run on the others, and the held-out set is
scored; the sets were written in separate rounds, as the holdouts were by other hands.
``--check`` retrains and fails if the committed file differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LABELED = REPO / "evals" / "labeled"
CLINC = REPO / ".." / "shared" / "data" / "clinc150" / "clinc150_train_val.json"

# The development sets, in groups written together (a set's emergencies and its look-alikes):
# leave-one-set-out holds out one group at a time.
GROUPS: dict[str, tuple[str, ...]] = {
    "emergencies": ("emergencies.jsonl", "non_emergencies.jsonl"),
    "tuning": ("tuning_emergencies.jsonl",),
    "tuning2": ("tuning2_emergencies.jsonl", "tuning2_non_emergencies.jsonl"),
    "tuning3": ("tuning3_emergencies.jsonl", "tuning3_non_emergencies.jsonl"),
    "tuning4": ("tuning4_emergencies.jsonl", "tuning4_non_emergencies.jsonl"),
    # The second holdout, spent: measured twice (68.3 %, then 77.5 % with this model's first
    # version), its misses read on 2026-12-02; a development set since (evals/labeled/README.md).
    "holdout2": ("holdout2_emergencies.jsonl", "holdout2_non_emergencies.jsonl"),
    # Written for #20's second model round, each measured on the floor before any change.
    "tuning5": ("tuning5_emergencies.jsonl", "tuning5_non_emergencies.jsonl"),
    "tuning6": ("tuning6_emergencies.jsonl", "tuning6_non_emergencies.jsonl"),
    # The third holdout, spent: measured once (94/120 = 78.3 %, 6/50 look-alikes) with this
    # model's second version, its misses read on 2026-12-02; a development set since.
    "holdout3": ("holdout3_emergencies.jsonl", "holdout3_non_emergencies.jsonl"),
    # Written for the seventh round after reading holdout3's misses, aimed at the kinds of
    # wording it missed (responders on the scene, being told to leave, sounds, damage still
    # active), in other words; measured on the floor before any change.
    "tuning7": ("tuning7_emergencies.jsonl", "tuning7_non_emergencies.jsonl"),
    # The fourth holdout, spent: measured once (108/120 = 90.0 %, 9/50 look-alikes) with this
    # model's third version; a development set since the eighth round.
    "holdout4": ("holdout4_emergencies.jsonl", "holdout4_non_emergencies.jsonl"),
    # Written for the eighth round before any change: emergencies told beside a past or fixed
    # one, and look-alikes that use hazard words for the past, the hypothetical, the routine.
    "tuning8": ("tuning8_emergencies.jsonl", "tuning8_non_emergencies.jsonl"),
    # Everyday maintenance in tenants' words (a leak into a bowl, a dead outlet, a chilly room):
    # CLINC150 is no maintenance text, and without these the model took a tenant's style for
    # an emergency.
    "routine": ("routine_non_emergencies.jsonl",),
    # The routing sets (texts about open work orders): the floor must stay silent on them
    # (tests/unit/test_eval_labeled.py); their labels name work orders, all are negatives here.
    "routing": ("binding.jsonl", "pivots.jsonl", "embedded_numbers.jsonl"),
}
TRAINING_FILES: tuple[str, ...] = tuple(name for group in GROUPS.values() for name in group)
# Never read, by this script or its figures: measured by the lead, never tuned on. The first
# holdout is worn (measured after four rounds of rules) but stays out so that it still says
# something about the model. Numbered holdouts ("holdout5_…", "holdout6…", any number) are
# written blind while this is trained: every one is refused by its name alone (none of their
# files is known here, or may be opened) unless it is listed in SPENT_HOLDOUTS, which a round
# does only after the lead has recorded its one measurement (evals/labeled/README.md).
HOLDOUTS = frozenset(
    {
        "holdout_emergencies.jsonl",
        "holdout_non_emergencies.jsonl",
        "spanish_holdout.jsonl",
    }
)
HOLDOUT_PREFIXES = ("holdout_", "spanish_holdout")
SPENT_HOLDOUTS = frozenset({2, 3, 4})
_NUMBERED_HOLDOUT = re.compile(r"holdout(\d+)(?!\d)")


def is_holdout(name: str) -> bool:
    """Whether ``name`` is a holdout's file, which training must never read: the first holdout,
    the Spanish one, and any other whose name begins "holdout" unless it is a spent numbered
    one (fail closed: "holdout-4", "holdout10" and "holdoutX" are refused too)."""
    if name in HOLDOUTS or name.startswith(HOLDOUT_PREFIXES):
        return True
    if not name.startswith("holdout"):
        return False
    numbered = _NUMBERED_HOLDOUT.match(name)
    return numbered is None or int(numbered.group(1)) not in SPENT_HOLDOUTS


def _refuse_holdouts(names: Sequence[str]) -> None:
    holdouts = [name for name in names if is_holdout(name)]
    if holdouts:
        raise SystemExit(f"refusing to train on a holdout: {holdouts}")


_refuse_holdouts(TRAINING_FILES)

# The false-raise budget the threshold is chosen at: on out-of-fold scores, the texts the model
# raises that no rule does (the rules' own false raises are fixed, the model's are what the
# threshold trades for recall), as a share of
# - CLINC150's 18,200 everyday requests: half the floor's 0.1 % gate (the rules use 2 of its 18);
# - every look-alike row of the development sets, pooled: 1.8 %, what the first model (n-grams
#   alone) added out of fold at its hand-set 0.975 when trained the same way on the same sets
#   (13 of their 704 rows: "no more false raises than today");
# - each look-alike file alone: 5 %, so that no one kind of everyday text pays for all of it.
CLINC_BUDGET = 0.0005
LOOK_ALIKE_BUDGET = 0.018
PER_FILE_BUDGET = 0.05
# A floor under the cross-validated threshold, a judgment recorded as one (as the first model's
# hand-set 0.975 was): with the length band (features version 4) the budget alone chose 0.958,
# where short everyday texts that the unit tests and scenarios hold must stay quiet scored
# 0.96-0.97 ("my car alarm went off and woke me up", "the hot water smells like sulfur",
# "sparkling water in the fridge"). Leave-one-set-out at this floor lost about one row a set.
THRESHOLD_FLOOR = 0.975
SEED = 20
FOLDS = 5
C = 8.0  # inverse regularisation of both heads
LOOK_ALIKE_WEIGHT = 24.0  # a look-alike row counts as this many CLINC150 rows
POSITIVE_WEIGHT = 24.0
KEEP = 12_000  # emergency-head weights kept (largest magnitude)
KEEP_PER_CATEGORY = 1_200
LEVELS = 2_000  # weights are stored as integers in [-LEVELS, LEVELS] times a scale
# Medical and violent emergencies are read as "other" by the floor (its advice: call 911).
# The third holdout's writer named four categories their own way.
CATEGORY_OF = {
    "medical": "other",
    "violence": "other",
    "co": "carbon_monoxide",
    "fire": "smoke_fire",
    "security": "break_in",
    "no_heat": "no_heat_freezing",
}


@dataclass(frozen=True, slots=True)
class Row:
    text: str
    source: str  # the file's name, or "clinc150"
    category: str  # a floor category, or "none"

    @property
    def positive(self) -> bool:
        return self.category != "none"


def training_digest() -> str:
    """SHA-256 over the training files' names and bytes, CLINC150 last: the weights are stale
    when it differs from the one they record."""
    _refuse_holdouts(TRAINING_FILES)
    digest = hashlib.sha256()
    for name in TRAINING_FILES:
        digest.update(name.encode() + b"\0" + (LABELED / name).read_bytes() + b"\0")
    digest.update(b"clinc150\0" + CLINC.read_bytes())
    return digest.hexdigest()


def load_rows() -> list[Row]:
    _refuse_holdouts(TRAINING_FILES)
    rows: list[Row] = []
    for name in TRAINING_FILES:
        for line in (LABELED / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                label = item.get("category", "none")  # the routing sets have none
                category = CATEGORY_OF.get(label, label)
                rows.append(Row(item["text"], name, category))
    data = json.loads(CLINC.read_text(encoding="utf-8"))
    splits = ("train", "val", "oos_train", "oos_val")
    rows += [Row(row[0], "clinc150", "none") for split in splits for row in data[split]]
    return rows


# --- training -----------------------------------------------------------------------------------


def _matrix(rows: Sequence[Row]) -> Any:
    from scipy.sparse import csr_matrix

    from maestro.domain.safety_model import BUCKETS, features

    indptr, indices, values = [0], [], []
    for row in rows:
        vector = features(row.text)
        indices.extend(vector)
        values.extend(vector.values())
        indptr.append(len(indices))
    return csr_matrix((values, indices, indptr), shape=(len(rows), BUCKETS))


def _largest(weights: Any, keep: int) -> tuple[list[int], list[float]]:
    """The buckets of the ``keep`` largest-magnitude non-zero weights, ascending, and their
    weights: the file stores these alone."""
    import numpy as np

    order = np.argsort(-np.abs(weights), kind="stable")[:keep]
    kept = sorted(int(b) for b in order if weights[b] != 0.0)
    return kept, [float(weights[b]) for b in kept]


def _weight(row: Row) -> float:
    if row.positive:
        return POSITIVE_WEIGHT
    return 1.0 if row.source == "clinc150" else LOOK_ALIKE_WEIGHT


def _fit(rows: Sequence[Row], matrix: Any) -> dict[str, Any]:
    """Both heads trained on ``rows`` (whose feature matrix is ``matrix``), pruned and
    quantised: the weights file's content, threshold aside."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    from maestro.domain.safety_rules import CATEGORIES

    labels = np.array([row.positive for row in rows])
    sample_weight = np.array([_weight(row) for row in rows])
    # Only the buckets some row meets can get a weight: fit on those columns alone.
    used = np.unique(matrix.indices)
    compact = matrix[:, used]
    head = LogisticRegression(C=C, solver="liblinear", random_state=SEED, max_iter=1000)
    head.fit(compact, labels, sample_weight=sample_weight)
    # The category head: one category against the others, each, on the emergencies alone.
    positives = np.flatnonzero(labels)
    named = np.unique(matrix[positives].indices)
    categories = np.array([CATEGORIES.index(rows[i].category) for i in positives])
    namer = OneVsRestClassifier(
        LogisticRegression(C=C, solver="liblinear", random_state=SEED, max_iter=1000)
    )
    namer.fit(matrix[positives][:, named], categories)
    assert list(namer.classes_) == list(range(len(CATEGORIES))), "a category has no example"

    def spread(coef: Any, columns: Any) -> Any:
        full = np.zeros(matrix.shape[1])
        full[columns] = coef
        return full

    columns = [(spread(head.coef_[0], used), KEEP)] + [
        (spread(estimator.coef_[0], named), KEEP_PER_CATEGORY) for estimator in namer.estimators_
    ]
    kept = [_largest(weights, keep) for weights, keep in columns]
    scale = max(max((abs(v) for v in values), default=0.0) for _, values in kept) / LEVELS
    stored = []
    for buckets, values in kept:
        gaps = [b - a for a, b in zip([0, *buckets], buckets, strict=False)]
        stored.append({"gaps": gaps, "values": [round(v / scale) for v in values]})
    return {
        "scale": scale,
        "bias": round(float(head.intercept_[0]), 6),
        "weights": stored[0],
        "category_bias": [round(float(e.intercept_[0]), 6) for e in namer.estimators_],
        "category": stored[1:],
    }


def _scores(content: dict[str, Any], matrix: Any) -> Any:
    """Emergency probabilities of ``matrix``'s rows under the stored (pruned, quantised)
    weights: what the runtime computes, in one product."""
    import numpy as np

    from maestro.domain.safety_model import BUCKETS

    vector = np.zeros(BUCKETS)
    buckets = np.cumsum(content["weights"]["gaps"])
    vector[buckets] = np.array(content["weights"]["values"]) * content["scale"]
    logits = matrix @ vector + content["bias"]
    return 1.0 / (1.0 + np.exp(-logits))


def _lowest_within(scores: Any, allowed: int) -> float:
    """The lowest threshold at which at most ``allowed`` of ``scores`` reach it: just above
    the (allowed+1)-th highest."""
    import numpy as np

    ranked = np.sort(scores)[::-1]
    return float(np.nextafter(ranked[allowed], 2.0)) if allowed < len(ranked) else 0.0


def thresholds_by_budget(rows: Sequence[Row], rules: Any, scores: Any) -> dict[str, float]:
    """For each part of the budget, the lowest threshold that keeps it on these (out-of-fold)
    scores: CLINC150, the look-alikes pooled, each look-alike file."""
    import numpy as np

    sources = np.array([row.source for row in rows])
    quiet = np.array([not row.positive for row in rows]) & ~rules  # negatives no rule raises
    negatives = np.array([not row.positive for row in rows])
    clinc = sources == "clinc150"
    look_alikes = negatives & ~clinc
    out = {
        "clinc150": _lowest_within(
            scores[quiet & clinc], int(np.floor(CLINC_BUDGET * clinc.sum() + 1e-9))
        ),
        "look-alikes pooled": _lowest_within(
            scores[quiet & look_alikes], int(np.floor(LOOK_ALIKE_BUDGET * look_alikes.sum() + 1e-9))
        ),
    }
    for source in dict.fromkeys(sources[look_alikes]):
        mask = look_alikes & (sources == source)
        allowed = int(np.floor(PER_FILE_BUDGET * mask.sum() + 1e-9))
        out[str(source)] = _lowest_within(scores[quiet & mask], allowed)
    return out


def choose_threshold(rows: Sequence[Row], rules: Any, scores: Any) -> float:
    """The lowest threshold that keeps every part of the budget, rounded up (never onto a
    negative's score), and never below ``THRESHOLD_FLOOR``."""
    by_budget = round(max(thresholds_by_budget(rows, rules, scores).values()) + 5e-7, 6)
    return max(by_budget, THRESHOLD_FLOOR)


def out_of_fold(rows: Sequence[Row], matrix: Any) -> Any:
    """Each row's score from the model trained on the other folds (stratified by file)."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    scores = np.zeros(len(rows))
    strata = [f"{row.source}:{row.positive}" for row in rows]
    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=SEED)
    for train, test in folds.split(np.zeros(len(rows)), strata):
        content = _fit([rows[i] for i in train], matrix[train])
        scores[test] = _scores(content, matrix[test])
    return scores


def rules_fire(rows: Sequence[Row]) -> Any:
    import numpy as np

    from maestro.domain.safety import rules_floor

    return np.array([rules_floor(row.text) is not None for row in rows])


# --- figures ------------------------------------------------------------------------------------


def figures(rows: Sequence[Row], rules: Any, scores: Any, threshold: float) -> dict[str, str]:
    """Per file: recall (emergencies) or false raises (look-alikes, CLINC150), combined floor
    and model alone."""
    import numpy as np

    sources = np.array([row.source for row in rows])
    positive = np.array([row.positive for row in rows])
    model = scores >= threshold
    both = rules | model
    out: dict[str, str] = {}
    for source in dict.fromkeys(row.source for row in rows):
        for sign, what in ((True, "recall"), (False, "false raises")):
            mask = (sources == source) & (positive == sign)
            if mask.any():
                n = int(mask.sum())
                out[f"{source} {what}"] = (
                    f"combined {int(both[mask].sum())}/{n} = {both[mask].mean():.1%}, "
                    f"model alone {int(model[mask].sum())}/{n} = {model[mask].mean():.1%}, "
                    f"rules alone {int(rules[mask].sum())}/{n}"
                )
    return out


def leave_one_set_out(rows: Sequence[Row], matrix: Any, rules: Any) -> dict[str, str]:
    """Each group held out in turn: threshold by cross-validation on the rest, model trained on
    the rest, held-out rows scored."""
    import numpy as np

    out: dict[str, str] = {}
    for name, files in GROUPS.items():
        held = np.array([row.source in files for row in rows])
        kept = np.flatnonzero(~held)
        kept_rows = [rows[i] for i in kept]
        threshold = choose_threshold(kept_rows, rules[kept], out_of_fold(kept_rows, matrix[kept]))
        content = _fit(kept_rows, matrix[kept])
        index = np.flatnonzero(held)
        held_rows = [rows[i] for i in index]
        scores = _scores(content, matrix[index])
        for key, value in figures(held_rows, rules[index], scores, threshold).items():
            out[f"{key} (threshold {threshold:.3f})"] = value
        print(f"  left out {name}: done", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    from maestro.domain.safety_concepts import FINGERPRINT
    from maestro.domain.safety_model import BUCKETS, FEATURES_VERSION, WEIGHTS_PATH, parse_weights
    from maestro.domain.safety_rules import CATEGORIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed file differs")
    parser.add_argument("--no-lofo", action="store_true", help="skip leave-one-set-out")
    args = parser.parse_args(argv)
    # One thread each, set before numpy loads: BLAS threads only contend on a shared machine
    # (ten times slower here).
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")

    rows = load_rows()
    matrix = _matrix(rows)
    rules = rules_fire(rows)
    oof = out_of_fold(rows, matrix)
    threshold = choose_threshold(rows, rules, oof)
    print(
        f"threshold (5-fold, out-of-fold): {threshold}; each part of the budget alone would allow:"
    )
    for source, lowest in thresholds_by_budget(rows, rules, oof).items():
        print(f"  {source}: {lowest:.6f}")
    for key, value in figures(rows, rules, oof, threshold).items():
        print(f"  cv {key}: {value}")
    if not args.no_lofo:
        print("leave one set out:")
        for key, value in leave_one_set_out(rows, matrix, rules).items():
            print(f"  {key}: {value}")

    content = _fit(rows, matrix)
    weights_file = {
        "features_version": FEATURES_VERSION,
        "buckets": BUCKETS,
        "ideas": FINGERPRINT,
        "categories": list(CATEGORIES),
        "digest": training_digest(),
        "training_files": [*TRAINING_FILES, "clinc150_train_val.json"],
        "threshold": threshold,
        **content,
    }
    parse_weights(weights_file)  # refuse to write what the runtime would refuse to read
    text = json.dumps(weights_file, separators=(",", ":")) + "\n"
    final = _scores(content, matrix)
    print("final model, development sets (in sample):")
    for key, value in figures(rows, rules, final, threshold).items():
        print(f"  {key}: {value}")
    if args.check:
        if WEIGHTS_PATH.read_text(encoding="utf-8") != text:
            print(f"{WEIGHTS_PATH} is stale: rerun without --check")
            return 1
        print(f"{WEIGHTS_PATH} is current")
        return 0
    WEIGHTS_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {WEIGHTS_PATH} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
