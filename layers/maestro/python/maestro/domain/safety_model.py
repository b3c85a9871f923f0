"""The safety floor's learned half: a linear model over hashed word and character n-grams.

The phrase rules (``safety``) find what their authors thought of; on texts written by someone
who never read them they miss a third of emergencies, most of them told without a hazard word
("my kid is blue and not breathing right", "the ceiling is bowing and dripping"). This scorer
reads the same text as overlapping n-grams (words, word pairs, and the 3-5 letter pieces of each
word, so a typo still shares most pieces with the word), each hashed with CRC-32 into one of
``2**20`` buckets, with the ideas its words stand for (``safety_concepts``: one feature per idea
and per pair of ideas in the text), and sums the weights of the buckets it meets: a logistic
regression trained by ``benchmarks/train_safety_model.py`` on the development sets of
``evals/labeled`` (positives) and on their look-alikes and CLINC150's 18,200 everyday requests
(negatives). A second, smaller
head of the same form names the category, so the advice matches the hazard.

Pure and deterministic: no I/O at import; the weights (``safety_model.json``, beside this file)
are read once, on the first call. CRC-32, never ``hash()``: Python salts string hashes per
process, and a bucket must mean the same thing in training and at runtime.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import accumulate
from pathlib import Path
from typing import cast

from maestro.domain.safety_concepts import FINGERPRINT as IDEAS_FINGERPRINT
from maestro.domain.safety_concepts import idea_grams
from maestro.domain.safety_framing import text_frames
from maestro.domain.safety_rules import CATEGORIES, Category

FEATURES_VERSION = 5
"""Bumped whenever :func:`features` changes: weights trained for another version are refused."""

BUCKETS = 1 << 20
WEIGHTS_PATH = Path(__file__).with_name("safety_model.json")

# A word: letters and digits, apostrophes inside it dropped ("don't" reads as "dont", as texted).
_WORD = re.compile(r"[^\W_]+(?:['’`][^\W_]+)*")
_APOSTROPHES = str.maketrans("", "", "'’`")
_DIGITS = re.compile(r"\d")
_CHAR_SIZES = (3, 4, 5)


@dataclass(frozen=True, slots=True)
class Token:
    """One word of the text: its normalised form and its span in the text as sent."""

    word: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """The words of ``text``, lower-cased, apostrophes dropped, every digit read as ``0``
    (a temperature's digits matter less than that it is one)."""
    return [
        Token(_DIGITS.sub("0", m.group().lower().translate(_APOSTROPHES)), m.start(), m.end())
        for m in _WORD.finditer(text)
    ]


# Words that deny what follows them ("no smoke", "isnt spreading", "without a smell"): the words
# after one (up to ``_NEGATED_SPAN``) also count as denied, so a look-alike that names a hazard
# to say it is absent reads apart from a report of it.
_NEGATORS = frozenset(
    [
        "no",
        "not",
        "never",
        "without",
        "isnt",
        "wasnt",
        "arent",
        "werent",
        "dont",
        "doesnt",
        "didnt",
        "nothing",
        "nobody",
        "none",
    ]
)
_NEGATED_SPAN = 3


def _length_band(count: int) -> str:
    """The text's length in words, as a band: the n-grams' values shrink as a text grows (unit
    length), and without a feature for it a long, calm report of danger read as weaker than a
    short one with the same words."""
    for limit, band in ((5, "1-4"), (10, "5-9"), (20, "10-19"), (40, "20-39")):
        if count < limit:
            return band
    return "40+"


def token_features(words: list[Token]) -> list[tuple[str, int]]:
    """Each n-gram of the text with the index of the word it belongs to (a pair: its first).

    ``w:`` a word, ``b:`` two neighbouring words, ``c:`` 3-5 letters of a word padded with
    spaces (so the pieces at its edges are told from those inside it), ``n:`` a word within
    ``_NEGATED_SPAN`` words after a negator. Repeats are kept here; :func:`features` counts
    each once.
    """
    grams: list[tuple[str, int]] = []
    denied_until = -1
    for index, token in enumerate(words):
        word = token.word
        grams.append((f"w:{word}", index))
        if index <= denied_until:
            grams.append((f"n:{word}", index))
        if word in _NEGATORS:
            denied_until = index + _NEGATED_SPAN
        if index + 1 < len(words):
            grams.append((f"b:{word} {words[index + 1].word}", index))
        padded = f" {word} "
        for size in _CHAR_SIZES:
            grams.extend(
                (f"c:{padded[i : i + size]}", index) for i in range(len(padded) - size + 1)
            )
    return grams


def bucket(gram: str) -> int:
    """The stable bucket of an n-gram (CRC-32, the same in every process and on every machine)."""
    return zlib.crc32(gram.encode("utf-8")) & (BUCKETS - 1)


# A text with fewer buckets than this is scaled as if it had this many: unit length would give
# the few n-grams of "ok and the" the weight of a whole sentence's.
_MIN_LENGTH = 64


def _value(present: int) -> float:
    return 1.0 / math.sqrt(max(present, _MIN_LENGTH))


# An idea (``safety_concepts``) weighs this many times a word's n-gram: a text has a few ideas
# among a hundred n-grams, and at 1x (one regularisation for all) the ideas' weights stayed too
# small to carry a wording the training texts never used. Leave-one-set-out put 2x and 3x about
# level; 3x raised "sparkling water in the fridge" (evals/labeled/README.md, second version).
IDEA_SCALE = 2.0


@lru_cache(maxsize=16_384)
def _word_buckets(word: str) -> tuple[int, ...]:
    """The buckets of one word's own n-grams (``w:`` and its ``c:`` letter pieces), in the order
    :func:`token_features` gives them. Cached: a pure function of the word, and texts reuse the
    same few thousand words (a long text's model cost was mostly these CRC-32s)."""
    grams = [f"w:{word}"]
    padded = f" {word} "
    for size in _CHAR_SIZES:
        grams.extend(f"c:{padded[i : i + size]}" for i in range(len(padded) - size + 1))
    return tuple(bucket(gram) for gram in grams)


def _gram_buckets(words: list[Token]) -> dict[int, int]:
    """For each bucket of :func:`token_features`' n-grams, the first word it belongs to (the
    same mapping, with each word's own n-grams looked up once)."""
    first_word: dict[int, int] = {}
    denied_until = -1
    for index, token in enumerate(words):
        word = token.word
        own = _word_buckets(word)
        first_word.setdefault(own[0], index)  # w:
        if index <= denied_until:
            first_word.setdefault(bucket(f"n:{word}"), index)
        if word in _NEGATORS:
            denied_until = index + _NEGATED_SPAN
        if index + 1 < len(words):
            first_word.setdefault(bucket(f"b:{word} {words[index + 1].word}"), index)
        for b in own[1:]:
            first_word.setdefault(b, index)
    return first_word


def _vector(words: list[Token], text: str) -> tuple[dict[int, float], dict[int, int]]:
    """The feature vector of a text's words, and for each n-gram bucket the first word it
    belongs to (ideas, the length band and the text's frames belong to no one word)."""
    first_word = _gram_buckets(words)
    if words:
        length = bucket(f"l:{_length_band(len(words))}")
        # How the text frames what it tells (safety_framing): past, fixed, hypothetical, a
        # detector's upkeep, or live now.
        framed = {bucket(f"f:{kind}") for kind in text_frames(text)}
        whole_text = ({length} | framed) - first_word.keys()
    else:
        whole_text = set()
    ideas = {bucket(gram) for gram in idea_grams([token.word for token in words])}
    ideas -= first_word.keys() | whole_text
    value = _value(len(first_word) + len(whole_text) + len(ideas))
    vector = dict.fromkeys(first_word, value)
    vector.update(dict.fromkeys(whole_text, value))
    vector.update(dict.fromkeys(ideas, value * IDEA_SCALE))
    return vector, first_word


def features(text: str) -> dict[int, float]:
    """The text's feature vector: each n-gram's bucket with one value, each idea's with
    ``IDEA_SCALE`` times it, the n-grams' part of unit length at most (a short text's is
    shorter, see ``_MIN_LENGTH``)."""
    vector, _ = _vector(tokens(text), text)
    return dict(sorted(vector.items()))


@dataclass(frozen=True, slots=True)
class Weights:
    """What training wrote: the emergency head, the category head and the threshold."""

    bias: float
    weights: dict[int, float]
    threshold: float
    category_bias: tuple[float, ...]
    category_weights: dict[int, tuple[float, ...]]
    digest: str


def _sparse(column: dict[str, list[int]], scale: float) -> dict[int, float]:
    # Buckets are stored as gaps from the previous one, weights as integers times `scale`.
    buckets = accumulate(column["gaps"])
    return {b: w * scale for b, w in zip(buckets, column["values"], strict=True)}


def parse_weights(raw: dict[str, object]) -> Weights:
    """The weights of ``safety_model.json``; a file for other features or categories is refused
    (a stale file would score every text wrongly, silently)."""
    if raw.get("features_version") != FEATURES_VERSION or raw.get("buckets") != BUCKETS:
        raise ValueError("safety_model.json was trained for other features: retrain it")
    if raw.get("ideas") != IDEAS_FINGERPRINT:
        raise ValueError("safety_model.json was trained on other lists of ideas: retrain it")
    if tuple(cast(list[str], raw["categories"])) != CATEGORIES:
        raise ValueError("safety_model.json was trained for other categories: retrain it")
    scale = cast(float, raw["scale"])
    head = cast(dict[str, list[int]], raw["weights"])
    per_category = [
        _sparse(column, scale) for column in cast(list[dict[str, list[int]]], raw["category"])
    ]
    category_weights: dict[int, list[float]] = {}
    for index, column in enumerate(per_category):
        for b, w in column.items():
            category_weights.setdefault(b, [0.0] * len(CATEGORIES))[index] = w
    return Weights(
        bias=cast(float, raw["bias"]),
        weights=_sparse(head, scale),
        threshold=cast(float, raw["threshold"]),
        category_bias=tuple(cast(list[float], raw["category_bias"])),
        category_weights={b: tuple(ws) for b, ws in category_weights.items()},
        digest=cast(str, raw["digest"]),
    )


@cache
def weights() -> Weights:
    """The committed weights, read on first use (not at import: a cold start that never needs
    the model never pays for it)."""
    return parse_weights(json.loads(WEIGHTS_PATH.read_text(encoding="utf-8")))


@dataclass(frozen=True, slots=True)
class ModelHit:
    """The model's reading of a text it scores at or above the threshold."""

    category: Category
    score: float
    start: int
    end: int
    strongest: tuple[str, ...]
    """The words whose n-grams weigh most toward an emergency, strongest first."""


def score(text: str, model: Weights | None = None) -> float:
    """The probability the model gives that ``text`` reports an emergency."""
    model = model or weights()
    logit = model.bias + sum(model.weights.get(b, 0.0) * v for b, v in features(text).items())
    return 1.0 / (1.0 + math.exp(-logit))


def model_hit(text: str, model: Weights | None = None) -> ModelHit | None:
    """The model's hit on ``text``, or ``None`` below its threshold."""
    model = model or weights()
    words = tokens(text)
    if not words:
        return None
    vector, first_word = _vector(words, text)
    logit = model.bias
    per_word = [0.0] * len(words)
    for b, value in vector.items():
        contribution = model.weights.get(b, 0.0) * value
        logit += contribution
        if b in first_word:
            per_word[first_word[b]] += contribution
    probability = 1.0 / (1.0 + math.exp(-logit))
    if probability < model.threshold:
        return None
    strongest = sorted(
        (i for i in range(len(words)) if per_word[i] > 0), key=lambda i: (-per_word[i], i)
    )[:3]
    return ModelHit(
        category=_category(vector, model),
        score=probability,
        start=words[0].start,
        end=words[-1].end,
        strongest=tuple(text[words[i].start : words[i].end] for i in strongest),
    )


def _category(vector: dict[int, float], model: Weights) -> Category:
    totals = list(model.category_bias)
    for b, value in vector.items():
        column = model.category_weights.get(b)
        if column is not None:
            for index, w in enumerate(column):
                totals[index] += w * value
    best = max(range(len(totals)), key=lambda index: (totals[index], -index))
    return CATEGORIES[best]


__all__ = [
    "BUCKETS",
    "FEATURES_VERSION",
    "WEIGHTS_PATH",
    "ModelHit",
    "Token",
    "Weights",
    "bucket",
    "features",
    "model_hit",
    "parse_weights",
    "score",
    "token_features",
    "tokens",
    "weights",
]
