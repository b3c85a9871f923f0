"""Sampling that respects I3: how often a model split between two mutations is acted on, and
what a clear one costs in reasoning calls.

A seeded simulated model answers each reasoning call with one of two mutating readings: with
probability p the first (relay to WO-A, or cancel WO-A), else the second (relay to WO-B, cancel
WO-B). The sender has both work orders open, so the mutation has two candidates. Each package
is drawn and aggregated by ``maestro.brain.sample_drawing.consult`` on ``ModelBrain`` (the first two
samples at once; the words' own binding beside the samples), exactly as the pipeline's brain
step does. The tenant's words ("the tap is dripping again") fit both taps, so the words bind
neither: the headline figures. A second text names the kitchen tap (WO-A), so the words bind
it: ``by_p_words_name_a``, where acting on A is right and acting on B never is. The embedded
stack is not started (nothing else in a package changes what sampling decides). A sample's
answer depends only on the seed, the package and the sample's index, never on which thread
asked first.

Merges into bench/results.json:

- ``sampling.act_rate_p60``: the share of packages acted on (decided, not asked) at p = 0.6,
  both pairs together (acceptance: at most 0.05);
- ``sampling.calls_p100``: mean reasoning calls per package at p = 1.0 (acceptance: at most 3);
- ``sampling.by_p``: per p = 0.5 … 1.0: the act rate, the wrong-act rate (acted on the
  minority reading), the mean calls, for the rule now and for the first rule (two agreeing
  samples stopped the draw; consensus over what was drawn);
- ``sampling.by_p_words_name_a``: the same, now, when the words name WO-A;
- ``sampling.single_candidate_calls_p100``: mean calls when the sender has one work order open
  (the early stop the evidence allows);
- ``sampling.packages_per_p``, ``sampling.seed``, ``sampling.contested_support``;
- ``sampling.acceptance``: each bar, met or not; the exit status fails on either.

Run: .venv/bin/python benchmarks/bench_sampling.py   (make bench runs it)
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from _results import merge_results

from maestro.brain.model_port import ModelAnswer, ModelRequest, Tier
from maestro.brain.reasoning import ModelBrain
from maestro.brain.sample_drawing import consult, draw
from maestro.domain.consensus import (
    ConsensusPolicy,
    ConsensusStatus,
    aggregate,
)
from maestro.domain.memory import BrainRequest, build_window
from maestro.domain.models import (
    ContextKind,
    FlushTrigger,
    Message,
    OpenContext,
    Package,
)
from maestro.domain.votes import SamplingPlan
from maestro_dev.scripted import answer_with

SEED = 21
PACKAGES = 1000  # per pair and p: 2,000 per p
PS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
ACT_RATE_P60_MAX = 0.05  # issue 21's bars
CALLS_P100_MAX = 3
T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
A, B = "WO-A1", "WO-B2"
PHONE = "+15550100777"


def _relay(wo_id: str) -> dict[str, Any]:
    return {"lane": "relay_to_open_wo", "target_wo_id": wo_id, "confidence": 0.9,
            "params": {"note": "the tap is dripping again"}}  # fmt: skip


def _cancel(wo_id: str) -> dict[str, Any]:
    return {"lane": "manage_existing", "confidence": 0.9,
            "params": {"operation": "cancel", "wo_ids": [wo_id]}}  # fmt: skip


PAIRS = {"relay A vs relay B": _relay, "cancel A vs cancel B": _cancel}


class SplitModel:
    """A language model that proposes the first reading with probability ``p``, the second
    otherwise; seeded per package and sample index, so threads cannot reorder it."""

    concurrent_calls = True

    def __init__(self, p: float, reading: Any, seed: int) -> None:
        self.p = p
        self.reading = reading
        self.seed = seed
        self.package = 0  # set before each package is drawn

    def describe(self) -> str:
        return f"simulated split model (p={self.p})"

    def model_id(self, tier: Tier) -> str:
        return f"split-{tier}"

    def ask(self, request: ModelRequest) -> ModelAnswer:
        coin = random.Random(f"{self.seed}:{self.package}:{request.sample_index}").random()
        wo_id = A if coin < self.p else B
        return answer_with(request, {"actions": [self.reading(wo_id)]}, self.model_id("strong"))


def _context(wo_id: str, what: str) -> OpenContext:
    return OpenContext(
        context_id=wo_id,
        kind=ContextKind.WORK_ORDER,
        description=f"{what}, unit 4C",
        opened_at=T0 - timedelta(days=2),
        wo_id=wo_id,
    )


CONTEXTS = (_context(A, "dripping tap in the kitchen"), _context(B, "dripping tap, bathroom"))


AMBIGUOUS_WORDS = "the tap is dripping again, can you sort it"
WORDS_NAME_A = "the kitchen tap is dripping again, can you sort it"


def _request(n: int, contexts: tuple[OpenContext, ...], text: str) -> BrainRequest:
    at = T0 + timedelta(minutes=n)
    message = Message(
        message_id=f"m-{n}",
        conversation_id="conv-bench",
        from_phone=PHONE,
        body=text,
        received_at=at,
        seq=n,
    )
    package = Package(
        package_id=f"pkg-{n:06d}",
        conversation_id="conv-bench",
        flush_number=n,
        trigger=FlushTrigger.IDLE_TIMEOUT,
        sender_phone=PHONE,
        messages=(message,),
        flushed_at=at,
    )
    window = build_window(package, package.messages, [], contexts, "tenant")
    return BrainRequest(package=package, sender_role="tenant", contexts=contexts, window=window)


@dataclass
class Tally:
    acted: int = 0
    wrong: int = 0
    calls: int = 0
    packages: int = 0

    def row(self) -> dict[str, float]:
        return {
            "act_rate": round(self.acted / self.packages, 4),
            "wrong_act_rate": round(self.wrong / self.packages, 4),
            "mean_calls": round(self.calls / self.packages, 3),
        }


def _measure(
    p: float,
    *,
    rule: str,
    contexts: tuple[OpenContext, ...] = CONTEXTS,
    packages: int = PACKAGES,
    text: str = AMBIGUOUS_WORDS,
) -> Tally:
    policy = ConsensusPolicy()
    tally = Tally()
    for pair_no, reading in enumerate(PAIRS.values()):
        model = SplitModel(p, reading, SEED + pair_no)
        brain = ModelBrain(model)
        for n in range(packages):
            model.package = n
            request = _request(n, contexts, text)
            if rule == "now":
                samples, result = consult(brain, request, policy)
            else:  # the first rule: two agreeing samples stopped it, nothing else was asked
                samples = draw(brain, request, SamplingPlan(first=2, k=policy.k))
                result = aggregate(samples, policy)
            tally.packages += 1
            tally.calls += len(samples)
            if result.status is ConsensusStatus.DECIDED:
                tally.acted += 1
                (verdict,) = result.passed
                targets = verdict.action.model_dump()
                named = targets.get("target_wo_id") or targets["params"]["wo_ids"][0]
                tally.wrong += named == B and p > 0.5
            if any(s.failure for s in samples):
                raise SystemExit(f"a simulated sample failed: {samples}")
    return tally


def main() -> int:
    by_p: dict[str, Any] = {}
    for p in PS:
        now, before = _measure(p, rule="now"), _measure(p, rule="before")
        by_p[f"{p:.1f}"] = {"now": now.row(), "before": before.row()}
        print(f"p={p:.1f}  now {now.row()}  before {before.row()}")
    named: dict[str, Any] = {}
    for p in PS:
        named[f"{p:.1f}"] = _measure(p, rule="now", text=WORDS_NAME_A).row()
        print(f"p={p:.1f}  words name WO-A: {named[f'{p:.1f}']}")
    single = _measure(1.0, rule="now", contexts=CONTEXTS[:1])
    figures = {
        "act_rate_p60": by_p["0.6"]["now"]["act_rate"],
        "calls_p100": by_p["1.0"]["now"]["mean_calls"],
        "by_p": by_p,
        "by_p_words_name_a": named,
        "single_candidate_calls_p100": single.row()["mean_calls"],
        "packages_per_p": PACKAGES * len(PAIRS),
        "seed": SEED,
        "contested_support": ConsensusPolicy().contested_support,
        "method": "simulated model on the brain's draw and consensus (no embedded stack)",
    }
    act_ok = figures["act_rate_p60"] <= ACT_RATE_P60_MAX
    calls_ok = figures["calls_p100"] <= CALLS_P100_MAX
    figures["acceptance"] = {"act_rate_p60 <= 0.05": act_ok, "calls_p100 <= 3": calls_ok}
    merge_results({"sampling": figures})
    print(json.dumps({k: v for k, v in figures.items() if not k.startswith("by_p")}, indent=2))
    return 0 if act_ok and calls_ok else 1


if __name__ == "__main__":
    sys.exit(main())
