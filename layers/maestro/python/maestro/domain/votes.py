"""Counting votes: the one engine under the brain's consensus and ``decide()``.

Each sample a model gave is a ballot: the readings it proposes (one vote per reading), an
explicit "it is ambiguous between these" vote, or a failure. The count is the same for an action
plan and for a bounded judgment:

- **support** of a reading: the samples that proposed it; each sample votes once per reading;
- **share** = support / samples *drawn*, failures included: a failed sample dilutes agreement
  exactly as a dissenting one does. Sampling is adaptive (``SamplingPlan``): a first batch, and
  more, up to the planned k, only while the drawn samples disagree, failed, or are unsure; a
  *guarded* reading (a mutation among several candidates) is drawn on while unanimous, up to
  ``confirm``, and acted on only then. So the denominator is what was actually asked: two
  agreeing samples of a planned five read 2/2 = 1.0 (the plan stopped because they agreed), and
  three agreeing beside two failures read 3/5;
- **entropy** over the samples' whole readings (failures count as one "no reading" outcome);
- **splits**: two readings, each with at least ``split_share``, that no sample proposed together
  are alternatives: the callers abstain instead of picking one.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from itertools import combinations

from pydantic import Field

from maestro.domain.common import Frozen

__all__ = ["Ballot", "Count", "Reading", "SamplingPlan", "Tally", "tally"]

NO_READING = "<no reading>"


class Reading(Frozen):
    key: str = Field(description="What two samples must share to agree")
    confidence: float = Field(default=1.0, ge=0.0, le=1.0, description="Self-reported")
    position: int = Field(default=0, ge=0, description="Where the sample put it")


class Ballot(Frozen):
    index: int = Field(ge=0)
    readings: tuple[Reading, ...] = ()
    ambiguous: tuple[str, ...] | None = Field(
        default=None, description="An explicit vote that the answer is ambiguous between these"
    )
    failure: str | None = None

    @property
    def valid(self) -> bool:
        return self.failure is None


class Count(Frozen):
    key: str
    support: int = Field(ge=0)
    share: float = Field(ge=0.0, le=1.0)
    mean_confidence: float = Field(ge=0.0, le=1.0)
    position: float = Field(ge=0.0)
    voters: frozenset[int]


class Tally(Frozen):
    drawn: int = Field(ge=0, description="Samples drawn: the denominator of every share")
    valid: int = Field(ge=0)
    counts: tuple[Count, ...] = Field(description="By first position, then support")
    ambiguity_votes: int = Field(default=0, ge=0)
    ambiguity_candidates: tuple[str, ...] = ()
    entropy_bits: float = Field(default=0.0, ge=0.0)
    failures: dict[str, int] = Field(default_factory=dict)

    def count(self, key: str) -> Count | None:
        return next((c for c in self.counts if c.key == key), None)

    @property
    def unanimous(self) -> bool:
        """Every drawn sample valid and proposing exactly the same readings."""
        return (
            self.drawn > 0
            and self.valid == self.drawn
            and self.ambiguity_votes in (0, self.drawn)
            and all(c.support == self.drawn for c in self.counts)
        )

    def splits(self, contender: Callable[[Count], bool], split_share: float) -> list[Count]:
        """The readings in a split: contenders (each at least ``split_share``) that no sample
        proposed together, strongest first."""
        contenders = sorted(
            (c for c in self.counts if contender(c) and c.share >= split_share),
            key=lambda c: (-c.support, c.key),
        )
        split_keys = {
            key
            for a, b in combinations(contenders, 2)
            if not (a.voters & b.voters)
            for key in (a.key, b.key)
        }
        return [c for c in contenders if c.key in split_keys]


def tally(ballots: Sequence[Ballot]) -> Tally:
    support: dict[str, set[int]] = defaultdict(set)
    positions: dict[str, list[int]] = defaultdict(list)
    confidence: dict[str, list[float]] = defaultdict(list)
    first_seen: dict[str, tuple[int, int]] = {}
    whole: list[str] = []
    failures: Counter[str] = Counter()
    ambiguity_votes = 0
    ambiguity_candidates: dict[str, None] = {}
    for ballot in ballots:
        if ballot.failure is not None:
            failures[ballot.failure] += 1
            whole.append(NO_READING)
            continue
        if ballot.ambiguous is not None:
            ambiguity_votes += 1
            ambiguity_candidates.update(dict.fromkeys(ballot.ambiguous))
        keys: list[str] = []
        for reading in ballot.readings:
            if ballot.index in support[reading.key]:
                continue  # a sample votes once per reading
            support[reading.key].add(ballot.index)
            positions[reading.key].append(reading.position)
            confidence[reading.key].append(reading.confidence)
            first_seen.setdefault(reading.key, (ballot.index, reading.position))
            keys.append(reading.key)
        whole.append(
            "|".join(sorted(keys)) + ("|<ambiguous>" if ballot.ambiguous is not None else "")
        )
    drawn = len(ballots)
    counts = [
        Count(
            key=key,
            support=len(voters),
            share=len(voters) / drawn if drawn else 0.0,
            mean_confidence=sum(confidence[key]) / len(confidence[key]),
            position=sum(positions[key]) / len(positions[key]),
            voters=frozenset(voters),
        )
        for key, voters in support.items()
    ]
    counts.sort(key=lambda c: (c.position, -c.support, c.key))
    return Tally(
        drawn=drawn,
        valid=drawn - sum(failures.values()),
        counts=tuple(counts),
        ambiguity_votes=ambiguity_votes,
        ambiguity_candidates=tuple(ambiguity_candidates),
        entropy_bits=round(_entropy_bits(whole), 6),
        failures=dict(failures),
    )


def _entropy_bits(outcomes: Sequence[str]) -> float:
    counts = Counter(outcomes)
    total = len(outcomes)
    # 0.0 - … keeps a unanimous vote at +0.0 rather than -0.0.
    return 0.0 - sum((c / total) * math.log2(c / total) for c in counts.values()) if total else 0.0


class SamplingPlan(Frozen):
    """When to stop drawing samples: never before the first batch, never after the cap, and in
    between only once the evidence settles the outcome.

    - **Unguarded** (``confirm`` is 0, or no drawn sample proposes a guarded reading): stop at
      the first batch (``first`` samples) when it is unanimous, every sample valid and sure
      (each reading's self-reported confidence at least ``sure``); otherwise draw one more at a
      time up to ``k``. A non-mutating reading, or a mutation with one candidate, costs
      ``first`` calls when the model is clear.
    - **Guarded** (``confirm`` > 0 and a drawn sample proposes a guarded reading, e.g. a
      mutation while the sender has several candidate work orders): the reading may be acted on
      only when ``confirm`` samples, all drawn, propose it (unanimity; a failure counts against
      it). So the draw goes on while every drawn sample proposes every guarded reading, up to
      ``confirm``, and stops as soon as one does not: from then on no continuation can act,
      the answer is to ask. Two agreeing samples prove little: a model that splits 60/40
      between two readings agrees with itself on the first two half the time, and on
      ``confirm`` = 7 in a row only 3 % of the time (0.6^7 + 0.4^7).
    - **Alone** (``alone``, never with a guarded reading drawn): one sample settles it when it
      is valid, sure and every reading it proposes is one ``settles_alone`` accepts (a new
      request, a reply, a question: nothing an existing work order undergoes). The guaranteed
      error bound is tight on mutations of what exists and looser on a new route (seed 000):
      a sure first sample of that kind costs one call. So the draw starts with that one sample
      (``opening``); anything else draws the rest of the first batch and goes on as above.
    """

    first: int = Field(default=2, ge=1)
    k: int = Field(default=5, ge=1, le=20)
    sure: float = Field(default=0.7, ge=0.0, le=1.0)
    confirm: int = Field(
        default=0,
        ge=0,
        le=20,
        description="Unanimous samples a guarded reading needs before it may be acted on "
        "(0: no reading is guarded); drawing a guarded reading may go past k up to this",
    )

    alone: bool = Field(
        default=False,
        description="A single valid, sure sample whose readings all settle alone may end the "
        "draw: it is then drawn by itself before the rest of the first batch",
    )

    @property
    def most(self) -> int:
        """The most samples this plan may draw."""
        return max(self.k, self.confirm)

    @property
    def batch(self) -> int:
        """The first batch: drawn before the rule may stop (at once when the model allows)."""
        return min(self.first, self.most)

    @property
    def opening(self) -> int:
        """Drawn before the first look: one sample when it may settle the package alone."""
        return 1 if self.alone else self.batch

    def enough(
        self,
        ballots: Sequence[Ballot],
        guarded: Callable[[str], bool] = lambda _key: False,
        settles_alone: Callable[[str], bool] = lambda _key: False,
    ) -> bool:
        """Whether to stop drawing after ``ballots``; ``guarded`` says which reading keys need
        ``confirm`` unanimous samples, ``settles_alone`` which one sure sample may settle
        (with ``alone``)."""
        drawn = len(ballots)
        counted = tally(ballots)
        at_stake = [c for c in counted.counts if guarded(c.key)] if self.confirm else []
        if at_stake:
            if any(c.support < drawn for c in at_stake):
                return True  # a dissent (or a failure): it can no longer be unanimous, so ask
            return drawn >= max(self.confirm, self.batch)
        if drawn >= self.k:
            return True
        sure = all(c.mean_confidence >= self.sure for c in counted.counts)
        alone = drawn == counted.valid == 1 and all(settles_alone(c.key) for c in counted.counts)
        if self.alone and alone and counted.counts and sure:
            return True  # one sure sample of what settles alone (a new route): enough
        if drawn < min(self.first, self.k):
            return False
        return counted.unanimous and sure
