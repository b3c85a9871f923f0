"""The sampling rule (I3): when the brain's draw may stop, on the pure domain and the draw.

Two agreeing samples settle a non-mutating reading or a mutation with a single candidate; a
mutation among several candidate work orders is acted on only after ``contested_support`` (3)
unanimous samples whose work orders the sender's words alone bind too (``consult``), and a
dissent ends the draw with a question. The draw's first batch runs at
once on a source that allows it, indexes and order fixed, each call charged to the package.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from datetime import datetime

import pytest
from builders import T0, act, failed, package, sample, wo_context

from maestro.brain.budgeted import BudgetedModel
from maestro.brain.model_port import ModelAnswer, ModelRequest, Tier
from maestro.brain.reasoning import ModelBrain
from maestro.brain.sample_drawing import consult, draw
from maestro.domain.actions import Action
from maestro.domain.consensus import (
    ConsensusPolicy,
    ConsensusStatus,
    aggregate,
    several_candidates,
)
from maestro.domain.memory import BrainRequest, build_window
from maestro.domain.models import ContextKind, OpenContext
from maestro.domain.records import BrainSample
from maestro.domain.votes import Ballot, Reading, SamplingPlan
from maestro.ports.limits import BudgetScope
from maestro_dev.scripted import answer_with

POLICY = ConsensusPolicy()
# Wordings no scenario uses: a radiator relayed to one of two open orders, or the other.
TO_A = (act("relay_to_open_wo", "WO-701", confidence=0.95, note="radiator ticks all night"),)
TO_B = (act("relay_to_open_wo", "WO-702", confidence=0.95, note="radiator ticks all night"),)
CHAT = (act("continue_with_assistant", confidence=0.95),)
PAGE = (act("escalate", confidence=0.9, hazard="sparks from the socket"),)
TWO_OPEN = (wo_context("WO-701", "radiator, unit 9"), wo_context("WO-702", "boiler, unit 9"))


def request(
    contexts: Sequence[OpenContext] = TWO_OPEN, text: str = "the radiator is ticking again"
) -> BrainRequest:
    pkg = package(text)
    window = build_window(pkg, pkg.messages, [], tuple(contexts), "tenant")
    return BrainRequest(package=pkg, sender_role="tenant", contexts=tuple(contexts), window=window)


class Sequenced:
    """A sample source answering index i with the i-th plan (a string: a failed sample)."""

    def __init__(self, plans: Sequence[tuple[Action, ...] | str]) -> None:
        self.plans = plans
        self.asked: list[int] = []

    def sample(self, req: BrainRequest, index: int) -> BrainSample:
        self.asked.append(index)
        plan = self.plans[index]
        return failed(index) if isinstance(plan, str) else sample(index, *plan)


def run(
    plans: Sequence[tuple[Action, ...] | str],
    contexts: Sequence[OpenContext] = TWO_OPEN,
    text: str = "the radiator is ticking again",
) -> tuple[int, ConsensusStatus]:
    """Drawn and aggregated as the brain step does (``consult``); the words ("the radiator …")
    bind WO-701 (the radiator) by themselves, not WO-702 (the boiler)."""
    samples, result = consult(Sequenced(plans), request(contexts, text), POLICY)
    return len(samples), result.status


def test_a_split_between_two_orders_is_never_acted_on_whatever_the_order() -> None:
    """Every sequence of relays to A or B: it acts only on three of three that the words
    corroborate, asks about three of three they do not, and stops at the first dissent (asking
    is settled there). The first rule acted on any two that agreed."""
    m = POLICY.contested_support
    for seq in itertools.product((TO_A, TO_B), repeat=m):
        drawn, status = run(seq)
        dissent = next((i for i in range(1, m) if seq[i] != seq[0]), None)
        if dissent is None:
            corroborated = seq[0] == TO_A
            expected = ConsensusStatus.DECIDED if corroborated else ConsensusStatus.AMBIGUOUS
            assert (drawn, status) == (m, expected)
        else:
            assert (drawn, status) == (max(dissent + 1, 2), ConsensusStatus.AMBIGUOUS), seq


def test_two_agreeing_relays_to_one_of_two_orders_do_not_settle_it() -> None:
    assert run([TO_A] * 7) == (3, ConsensusStatus.DECIDED)  # was 2, then 7
    assert run([TO_A, TO_A, TO_B, TO_A, TO_A, TO_A, TO_A]) == (3, ConsensusStatus.AMBIGUOUS)


def test_unanimous_samples_act_only_where_the_words_bind_the_same_order() -> None:
    """The same three samples: acted on when the words name that order, asked about by name
    when they name the other or neither ("Did you mean …? Reply YES")."""
    assert run([TO_B] * 3, text="the boiler is banging again tonight") == (
        3,
        ConsensusStatus.DECIDED,
    )
    assert run([TO_A] * 3, text="the boiler is banging again tonight")[1] is (
        ConsensusStatus.AMBIGUOUS
    )
    for vague in ("it is making that noise again", "still not fixed??"):
        assert run([TO_A] * 3, text=vague)[1] is ConsensusStatus.AMBIGUOUS, vague
        assert run([TO_B] * 3, text=vague)[1] is ConsensusStatus.AMBIGUOUS, vague
    _, asked = consult(Sequenced([TO_B] * 3), request(TWO_OPEN, "still not fixed??"), POLICY)
    assert asked.candidates == ("WO-702",)  # dispose names it: "Did you mean WO-702 …?"
    assert "the words alone do not say which" in asked.reason


def test_a_mutation_with_a_single_candidate_stops_at_the_first_batch() -> None:
    one = TWO_OPEN[:1]
    assert run([TO_A] * 7, one) == (2, ConsensusStatus.DECIDED)


def test_unanimity_on_a_non_mutating_reading_stops_at_the_first_batch() -> None:
    assert run([CHAT] * 7) == (2, ConsensusStatus.DECIDED)


def test_listing_ones_requests_among_several_changes_nothing_and_stops_early() -> None:
    listing = (act("manage_existing", confidence=0.95, operation="list"),)
    assert run([listing] * 7) == (2, ConsensusStatus.DECIDED)
    cancel = (act("manage_existing", confidence=0.95, operation="cancel", wo_ids=("WO-702",)),)
    assert run([cancel] * 7, text="call off the boiler visit") == (3, ConsensusStatus.DECIDED)
    assert run([cancel] * 7) == (3, ConsensusStatus.AMBIGUOUS)  # the words name the radiator


def test_an_escalation_beside_a_mutation_is_not_held_for_seven() -> None:
    # An escalation is settled the unguarded way (as before): a split draws on to k, not 7.
    assert run([PAGE, TO_A, TO_A, TO_A, TO_A, TO_A, TO_A]) == (5, ConsensusStatus.ESCALATE)
    both = PAGE + TO_A
    assert run([both] * 7) == (2, ConsensusStatus.ESCALATE)


def test_a_failed_sample_among_several_candidates_asks() -> None:
    """Failures count against unanimity: fail closed, ask rather than act on what is left."""
    assert run([TO_A, "timeout", TO_A, TO_A, TO_A, TO_A, TO_A]) == (2, ConsensusStatus.AMBIGUOUS)


def test_the_aggregate_alone_holds_the_bar_for_a_contested_mutation() -> None:
    """Five of five relays (a plan that stopped at k) pass with one candidate; with two, only
    when the words bind the same order, and two of two are never enough."""
    five = [sample(i, *TO_A) for i in range(5)]
    assert aggregate(five, POLICY).status is ConsensusStatus.DECIDED
    held = aggregate(five, POLICY, contested=True)
    assert held.status is ConsensusStatus.AMBIGUOUS
    assert "the words alone do not say which" in held.reason
    assert (held.contested, held.planned_k, held.corroborated) == (True, 5, ())
    bound = aggregate(five, POLICY, contested=True, corroborated={"WO-701"})
    assert (bound.status, bound.corroborated) == (ConsensusStatus.DECIDED, ("WO-701",))
    other = aggregate(five, POLICY, contested=True, corroborated={"WO-702"})
    assert other.status is ConsensusStatus.AMBIGUOUS
    two = aggregate(five[:2], POLICY, contested=True, corroborated={"WO-701"})
    assert two.status is ConsensusStatus.AMBIGUOUS
    assert "3 of 3 needed" in two.reason


def test_several_candidates_counts_distinct_work_orders_only() -> None:
    asked = OpenContext(
        context_id="Q-1",
        kind=ContextKind.PENDING_CLARIFICATION,
        description="which one did you mean?",
        opened_at=T0,
    )
    assert not several_candidates(())
    assert not several_candidates(TWO_OPEN[:1])
    assert not several_candidates((TWO_OPEN[0], TWO_OPEN[0], asked))
    assert several_candidates(TWO_OPEN)


# -- the first batch at once -----------------------------------------------------------------


class Clock:
    def now(self) -> datetime:
        return T0


class Rendezvous:
    """A model whose first two calls each wait for the other: it answers only if they run at
    the same time (drawn one after the other, the first call times out)."""

    concurrent_calls = True

    def __init__(self) -> None:
        self.meet = threading.Barrier(2, timeout=10)
        self.threads: dict[int, str] = {}

    def describe(self) -> str:
        return "rendezvous"

    def model_id(self, tier: Tier) -> str:
        return f"rendezvous-{tier}"

    def ask(self, req: ModelRequest) -> ModelAnswer:
        if req.sample_index < 2:
            self.meet.wait()
        self.threads[req.sample_index] = threading.current_thread().name
        target = "WO-701" if req.sample_index != 1 else "WO-702"  # the second one dissents
        plan = {"actions": [{"lane": "relay_to_open_wo", "target_wo_id": target,
                             "confidence": 0.9, "params": {"note": "ticking"}}]}  # fmt: skip
        return answer_with(req, plan, self.model_id(req.tier))


class Counting:
    def __init__(self) -> None:
        self.scopes: list[BudgetScope] = []
        self.lock = threading.Lock()

    def reserve(self, scope: BudgetScope, at: datetime) -> bool:
        with self.lock:
            self.scopes.append(scope)
        return True

    def record_tokens(self, scope: BudgetScope, at: datetime, tokens: int) -> None:
        pass


def test_the_first_two_samples_are_drawn_at_once_in_index_order_and_charged() -> None:
    inner = Rendezvous()
    budget = Counting()
    model = BudgetedModel(inner, budget, Clock())
    with model.scope("conv-9", "pkg-9"):
        samples = draw(ModelBrain(model), request(), POLICY.plan(contested=True))
    assert [s.index for s in samples] == [0, 1]  # the dissent at 1 settles it: ask
    assert [s.actions[0].target_wo_id for s in samples if s.actions] == ["WO-701", "WO-702"]
    assert len({inner.threads[0], inner.threads[1]}) == 2
    assert budget.scopes == [BudgetScope(conversation_id="conv-9", package_id="pkg-9")] * 2


def test_a_source_that_replays_in_call_order_is_drawn_one_at_a_time() -> None:
    source = Sequenced([TO_A, TO_B])
    draw(source, request(), POLICY.plan(contested=True))
    assert source.asked == [0, 1]
    assert not getattr(source, "concurrent_samples", False)


@pytest.mark.parametrize("contested", [False, True])
def test_the_plan_never_draws_past_its_most(contested: bool) -> None:
    plan = POLICY.plan(contested)
    drawn, _ = run([TO_A] * 20, TWO_OPEN if contested else TWO_OPEN[:1])
    assert drawn <= plan.most


# -- one sample for a sure route_new reading (seed 000's asymmetry) ----------------------------

ONE_OPEN = TWO_OPEN[:1]
# Wordings no scenario uses: a new request about the balcony railing, or a question.
NEW = (act("create_wo", confidence=0.92, summary="balcony railing wobbles when leaned on"),)
UNSURE_NEW = (act("create_wo", confidence=0.55, summary="balcony railing wobbles when leaned on"),)
ASK = (act("clarify", confidence=0.9, question="is it the railing or the balcony door?"),)


def test_a_sure_new_request_stops_at_one_sample() -> None:
    """A sure create_wo (no open order, or one) is settled by its one sample: a second that
    would dissent is never asked for (a new request mutates no existing work order)."""
    for contexts in ((), ONE_OPEN):
        source = Sequenced([NEW, TO_A, TO_A])
        samples = draw(source, request(contexts), POLICY.plan(several_candidates(contexts)))
        assert source.asked == [0]
        result = aggregate(samples, POLICY)
        assert (result.status, result.k, result.votes) == (
            ConsensusStatus.DECIDED,
            1,
            {"create_wo:new:1": 1},
        )


def test_the_plan_lets_one_sure_sample_settle_only_what_settles_alone() -> None:
    """The pure rule: one valid sample at or above ``sure``, every reading accepted by
    ``settles_alone``, and only when the plan says ``alone``; the opening is then one."""

    def one(*readings: tuple[str, float], failure: str | None = None) -> list[Ballot]:
        return [
            Ballot(
                index=0,
                readings=tuple(Reading(key=k, confidence=c) for k, c in readings),
                failure=failure,
            )
        ]

    plan = SamplingPlan(alone=True)
    new_only = {"create_wo:new:1", "continue_with_assistant"}.__contains__
    assert (plan.opening, SamplingPlan().opening, plan.batch) == (1, 2, 2)
    assert plan.enough(one(("create_wo:new:1", 0.9)), settles_alone=new_only)
    assert plan.enough(one(("create_wo:new:1", 0.9), ("continue_with_assistant", 0.8)),
                       settles_alone=new_only)  # fmt: skip
    assert not plan.enough(one(("create_wo:new:1", 0.69)), settles_alone=new_only)
    assert not plan.enough(one(("create_wo:new:1", 0.9), ("relay_to_open_wo:WO-1", 0.9)),
                           settles_alone=new_only)  # fmt: skip
    assert not plan.enough(one(failure="timeout"), settles_alone=new_only)
    assert not plan.enough(one(), settles_alone=new_only)
    assert not SamplingPlan().enough(one(("create_wo:new:1", 0.9)), settles_alone=new_only)
    assert not plan.enough(one(("create_wo:new:1", 0.9)))


def test_a_sure_chat_or_question_stops_at_one_sample() -> None:
    assert run([CHAT, TO_A], ONE_OPEN) == (1, ConsensusStatus.DECIDED)
    assert run([ASK, TO_A], ONE_OPEN) == (1, ConsensusStatus.AMBIGUOUS)
    assert run([NEW + CHAT, TO_A], ()) == (1, ConsensusStatus.DECIDED)


def test_an_unsure_or_failed_or_mixed_first_sample_draws_the_second() -> None:
    """Below the bar, a failure, or a mutation of an open order beside the new request: the
    first batch of two and the rule as before (unsure and unanimous draws on to k)."""
    assert run([UNSURE_NEW] * 7, ONE_OPEN) == (5, ConsensusStatus.DECIDED)
    assert run(["timeout", NEW, NEW, NEW, NEW], ONE_OPEN) == (5, ConsensusStatus.DECIDED)
    assert run([NEW + TO_A] * 7, ONE_OPEN) == (2, ConsensusStatus.DECIDED)


def test_a_relay_to_the_one_open_order_draws_two() -> None:
    source = Sequenced([TO_A] * 7)
    assert len(draw(source, request(ONE_OPEN), POLICY.plan(contested=False))) == 2
    assert source.asked == [0, 1]


def test_an_escalation_alone_keeps_the_first_batch_of_two() -> None:
    assert run([PAGE, CHAT, CHAT, CHAT, CHAT], ONE_OPEN) == (5, ConsensusStatus.ESCALATE)
    assert run([PAGE] * 5, ONE_OPEN) == (2, ConsensusStatus.ESCALATE)


def test_among_several_orders_one_sample_settles_nothing() -> None:
    """Contested (two open orders): a create_wo is a held reading there too (is it new, or one
    of the open ones?), so it needs three of three and words that say it is new, as a relay
    needs words that name its order; a sure chat two."""
    assert run([NEW] * 7) == (3, ConsensusStatus.AMBIGUOUS)  # the words name the radiator
    assert run([NEW] * 7, text="also the bathroom fan is dead now") == (3, ConsensusStatus.DECIDED)
    assert run([NEW, TO_A]) == (2, ConsensusStatus.AMBIGUOUS)
    assert run([TO_A] * 7) == (3, ConsensusStatus.DECIDED)
    assert run([CHAT, TO_A]) == (2, ConsensusStatus.AMBIGUOUS)


class Ordered:
    """A model that may be called concurrently and logs which thread made each call: a sample
    drawn alone runs on the caller's thread, a batch drawn at once on the pool's."""

    concurrent_calls = True

    def __init__(self, plans: dict[int, dict[str, object]]) -> None:
        self.plans = plans
        self.calls: list[tuple[int, bool]] = []
        self.lock = threading.Lock()

    def describe(self) -> str:
        return "ordered"

    def model_id(self, tier: Tier) -> str:
        return f"ordered-{tier}"

    def ask(self, req: ModelRequest) -> ModelAnswer:
        with self.lock:
            self.calls.append(
                (req.sample_index, threading.current_thread().name.startswith("sample"))
            )
        return answer_with(req, self.plans[req.sample_index], self.model_id(req.tier))


def _plan_of(lane: str, **fields: object) -> dict[str, object]:
    return {"actions": [{"lane": lane, "confidence": 0.9, **fields}]}


def test_the_first_sample_is_drawn_alone_when_it_may_suffice() -> None:
    """Not contested: the first sample alone (one call when it settles it; else the second
    after it, which reads the window sample 1 wrote to the prompt cache); contested: the first
    two at once, as before."""
    new = _plan_of("create_wo", params={"ref": "new:1", "summary": "balcony railing wobbles"})
    relay = _plan_of("relay_to_open_wo", target_wo_id="WO-701", params={"note": "ticking"})
    other = _plan_of("relay_to_open_wo", target_wo_id="WO-702", params={"note": "ticking"})

    alone = Ordered({0: new, 1: new})
    draw(ModelBrain(alone), request(ONE_OPEN), POLICY.plan(contested=False))
    assert alone.calls == [(0, False)]

    then_second = Ordered({0: relay, 1: relay})
    draw(ModelBrain(then_second), request(ONE_OPEN), POLICY.plan(contested=False))
    assert then_second.calls == [(0, False), (1, False)]

    at_once = Ordered({0: relay, 1: other})
    draw(ModelBrain(at_once), request(), POLICY.plan(contested=True))
    assert sorted(at_once.calls) == [(0, True), (1, True)]


def test_a_work_order_named_by_its_number_binds_it_also_as_a_call_says_it() -> None:
    """The words bind a work order they name by its id, written or spoken digit by digit (a
    call's transcript: "seven-oh-two"), whatever else they say; a number that is no open
    order's id binds nothing."""
    cancel = (act("manage_existing", confidence=0.95, operation="cancel", wo_ids=("WO-702",)),)
    for said in ("drop 702 please", "cancel seven-oh-two", "cancel seven zero two thanks"):
        assert run([cancel] * 3, text=said) == (3, ConsensusStatus.DECIDED), said
    for said in ("cancel it, I'm in 7", "cancel the one from oh two"):
        assert run([cancel] * 3, text=said)[1] is ConsensusStatus.AMBIGUOUS, said
