"""The pre-check: the cheap triage that runs before any mutation (I1).

Order, per "The brain's contract":

1. the deterministic safety floor over every message of the package: any hit escalates, an
   ``urgent`` hit too (escalation is recall-first);
2. a cheap model, when one is plugged in (the :class:`PreCheckModel` seam), consulted only after
   the floor found nothing; it may raise an escalation the floor missed (I5);
3. otherwise a deliberately tight handback detector for soft, no-action packages ("thanks!",
   "ok", "👍"), and for everything else ``reasoning``: when unsure, the brain looks at it.

Fail closed: a model that raises or answers something invalid gives the deterministic result,
marked ``fallback=True``; never a crash.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Protocol

from maestro.domain.consent import only_consent_keywords
from maestro.domain.models import Package
from maestro.domain.records import PreCheckResult, Route
from maestro.domain.safety import SafetyHit, safety_floor

__all__ = [
    "HANDBACK_CONFIDENCE",
    "MODEL_HANDBACK_MIN_CONFIDENCE",
    "REASONING_CONFIDENCE",
    "PreCheckModel",
    "deterministic_precheck",
    "is_soft_handback",
    "package_safety_hit",
    "precheck",
]

HANDBACK_CONFIDENCE = 0.9
REASONING_CONFIDENCE = 0.5
MODEL_HANDBACK_MIN_CONFIDENCE = 0.8
"""A model handback below this is "unsure", and unsure means reasoning."""

_MAX_HANDBACK_WORDS = 6


class PreCheckModel(Protocol):
    """The cheap model seam (cloud: a small Claude model behind ``decide()``).

    It answers with a :class:`PreCheckResult`, or the same fields as a mapping or a JSON string.
    The answer is untrusted: it is validated here, and anything invalid is a fallback.
    """

    def __call__(self, package: Package, /) -> PreCheckResult | Mapping[str, Any] | str: ...


# --- the safety floor over a package -----------------------------------------------------------


def package_safety_hit(package: Package) -> SafetyHit | None:
    """The most severe, then earliest, floor hit over the package's messages.

    Each message alone first (so the phrase is exactly what one message said), then the joined
    text, so a phrase split over two texts ("i smell" / "gas") is not missed (recall first).
    """
    best: SafetyHit | None = None
    for message in package.messages:
        hit = safety_floor(message.body)
        if hit is not None and (best is None or _more_severe(hit, best)):
            best = hit
    if best is None and len(package.messages) > 1:
        best = safety_floor(package.text)
    return best


def _more_severe(a: SafetyHit, b: SafetyHit) -> bool:
    # Messages are visited in order, so on equal severity the earlier one stays.
    return a.severity == "emergency" and b.severity != "emergency"


def _escalation(hit: SafetyHit) -> PreCheckResult:
    return PreCheckResult(
        route=Route.ESCALATE,
        severity=hit.severity,
        confidence=1.0,
        evidence=hit.explained[:400],
        source="safety_floor",
    )


# --- the handback detector ---------------------------------------------------------------------

# A whitelist, not a blacklist: any word not listed (a number, a day, "sink", "yes"...) makes the
# package reasoning by construction. "yes"/"no"/"sure" are left out on purpose: they answer
# questions (a held confirmation, a clarification) and must reach the brain.
_ANCHORS = frozenset(
    {
        "thanks", "thank", "thankyou", "thx", "thnx", "thanx", "ty", "tysm", "cheers",
        "ok", "okay", "okey", "k", "kk", "alright", "great", "good", "perfect", "awesome",
        "cool", "nice", "wonderful", "lovely", "excellent", "noted", "appreciated",
        "appreciate", "bye", "goodbye", "byebye",
        "👍", "🙏", "😊", "🙂", "😀", "😁", "😄", "☺", "❤", "♥", "👌", "✅", "🙌", "💯",
    }
)  # fmt: skip
# Words that only soften an anchor ("thank you so much", "sounds good", "got it").
_FILLERS = frozenset(
    {"you", "u", "so", "very", "much", "sounds", "got", "it", "all", "that's", "thats", "oh",
     "ah", "again", "a", "lot", "bunch", "and"}
)  # fmt: skip
_IGNORED = re.compile(r"[!.,~\-\s]+")
_MODIFIERS = re.compile("[\ufe0f\ufe0e\u200d\U0001f3fb-\U0001f3ff]")
_TOKEN = re.compile(r"[a-z']+|\S")


def is_soft_handback(package: Package) -> bool:
    """True only for a short, soft, no-action package: "thanks!", "ok", "great thank you", "👍".

    Tight on purpose (a missed handback costs one brain call; a wrong one drops a request):
    a question mark, an attachment, a number, or more than a few words is never a handback.
    """
    if any(m.media_urls for m in package.messages):
        return False  # a photo with "thanks" may be the evidence of a problem
    text = _MODIFIERS.sub("", package.text.lower().replace("’", "'"))
    if not text.strip() or "?" in text or any(ch.isdigit() for ch in text):
        return False
    tokens = _TOKEN.findall(_IGNORED.sub(" ", text))
    if not tokens or len(tokens) > _MAX_HANDBACK_WORDS:
        return False
    allowed = _ANCHORS | _FILLERS
    return all(t in allowed for t in tokens) and any(t in _ANCHORS for t in tokens)


def deterministic_precheck(package: Package) -> PreCheckResult:
    """The pre-check without a model: floor, then handback, else reasoning."""
    hit = package_safety_hit(package)
    if hit is not None:
        return _escalation(hit)
    if is_soft_handback(package) or only_consent_keywords(package):
        return PreCheckResult(
            route=Route.HANDBACK,
            confidence=HANDBACK_CONFIDENCE,
            evidence=package.text[:400],
            source="default",
        )
    return PreCheckResult(route=Route.REASONING, confidence=REASONING_CONFIDENCE, source="default")


# --- the model seam ----------------------------------------------------------------------------


def _parse_model_answer(answer: object) -> PreCheckResult:
    """Validate the model's answer; raises ValueError (or ValidationError) when it is invalid."""
    if isinstance(answer, PreCheckResult):
        data: object = answer.model_dump()
    elif isinstance(answer, str | bytes):
        data = json.loads(answer)
    else:
        data = answer
    if not isinstance(data, Mapping):
        raise ValueError(f"a pre-check answer is an object, got {type(data).__name__}")
    # The model speaks for itself only: it cannot claim to be the floor or a fallback.
    result = PreCheckResult.model_validate({**data, "source": "model", "fallback": False})
    if result.severity in {"urgent", "emergency"} and result.route is not Route.ESCALATE:
        # Recall first: a model that sees an emergency but routes elsewhere still escalates.
        return result.model_copy(update={"route": Route.ESCALATE})
    if result.route is Route.ESCALATE and result.severity == "none":
        return result.model_copy(update={"severity": "urgent"})
    if result.route is Route.HANDBACK and result.confidence < MODEL_HANDBACK_MIN_CONFIDENCE:
        return result.model_copy(update={"route": Route.REASONING})  # when unsure, reasoning
    return result


def precheck(package: Package, model: PreCheckModel | None = None) -> PreCheckResult:
    """Triage ``package``: ``escalate``, ``handback`` or ``reasoning`` (the default when unsure).

    The safety floor runs first and a hit is final: no model can talk it down. ``model`` is
    consulted only when the floor found nothing; if it raises or answers something invalid, the
    deterministic result is returned with ``fallback=True``.
    """
    hit = package_safety_hit(package)
    if hit is not None:
        return _escalation(hit)
    if model is None or only_consent_keywords(package):
        # A bare STOP/START was answered by Twilio at the carrier: no model call, nothing to do.
        return deterministic_precheck(package)
    try:
        return _parse_model_answer(model(package))
    except Exception:  # a raise or an invalid answer (ValidationError, bad JSON): fail closed
        return deterministic_precheck(package).model_copy(update={"fallback": True})
