"""The watcher reads every claim of a work order's dispatch back on the embedded stack (issue 19):
the offers and the PM's approval request by SID on the messenger's surface and on the dispatch
run, the assignment on the WO, what was gathered and how a run failed on the run (and the
on-call PM's page by SID). An honest dispatch leaves Evidence only; a run changed under its
claims is read as Shame."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from maestro.domain.events import DomainEvent
from maestro.domain.ledger import LedgerRow
from maestro_dev.local.stack import LocalStack
from tests.integration.test_dispatch import DAY_START, HOUR, _answer, _open, _run, _stack

pytestmark = pytest.mark.integration


def _accepted_after_gather(stack: LocalStack) -> str:
    wo_id = _open(stack, "the laundry sink is clogged and the water will not go down")
    _answer(stack, wo_id, "details", items=("access", "availability"), package_id="pkg-sol-9")
    _answer(stack, wo_id, "decline")
    _answer(stack, wo_id, "accept")
    return wo_id


def _paged_after_every_offer_lapsed(stack: LocalStack) -> str:
    wo_id = _open(stack, "the pipe under the laundry tub is leaking onto the floor")
    stack.advance(2 * HOUR)  # gather's deadline
    stack.advance(12 * HOUR)  # three routine offers, four hours each
    return wo_id


def _approved_by_the_pm(stack: LocalStack) -> str:
    wo_id = _open(stack, "the bathroom faucet handle is cracked and it drips constantly")
    _answer(stack, wo_id, "details", items=("access",))
    _answer(stack, wo_id, "approve")
    return wo_id


def _refused_by_the_pm(stack: LocalStack) -> str:
    wo_id = _open(stack, "the shower drain is clogged and water stands in the tray")
    _answer(stack, wo_id, "details", items=("access",))
    _answer(stack, wo_id, "refuse")
    return wo_id


FLOWS: dict[str, tuple[Callable[[LocalStack], str], dict[str, int], set[str]]] = {
    # flow → (how it goes, its settings, the wo.* claims it must leave)
    "accepted": (_accepted_after_gather, {}, {"wo.gathered", "wo.offered", "wo.dispatched"}),
    "paged": (
        _paged_after_every_offer_lapsed,
        {},
        {"wo.gathered", "wo.offered", "wo.dispatch_failed"},
    ),
    "approved": (
        _approved_by_the_pm,
        {"approval_over_usd": 100},
        {"wo.approval_requested", "wo.offered"},
    ),
    "refused": (
        _refused_by_the_pm,
        {"approval_over_usd": 100},
        {"wo.approval_requested", "wo.dispatch_failed"},
    ),
}


def _rows(stack: LocalStack, wo_id: str) -> list[LedgerRow]:
    stack.advance(5)  # the watcher's queue is polled
    return stack.ledger.for_wo(wo_id)


@pytest.mark.parametrize("flow", sorted(FLOWS))
def test_an_honest_dispatch_is_read_back_as_evidence_only(flow: str) -> None:
    play, settings, claims = FLOWS[flow]
    for stack in _stack(DAY_START, settings=settings):
        wo_id = play(stack)
        rows = _rows(stack, wo_id)
        dispatch = [
            r for r in rows if r.event_type.startswith("wo.") and r.event_type != "wo.created"
        ]
        assert {r.event_type for r in dispatch} >= claims, [r.event_type for r in rows]
        shame = [(r.event_type, r.detail) for r in stack.ledger.scan() if r.verdict == "shame"]
        assert shame == []
        for row in dispatch:
            # Read, never taken from the claim: each row says what its surface returned.
            assert row.read, row.event_type
            if row.event_type in ("wo.offered", "wo.approval_requested"):
                assert "run_version" in row.read  # the run was read beside the text
                assert "body_sha256" in row.read
            elif row.event_type == "wo.dispatched":
                assert row.provenance == "wo-read"
                assert row.read["status"] == "assigned"
        if flow == "paged":
            (failed,) = [r for r in dispatch if r.event_type == "wo.dispatch_failed"]
            assert failed.read["reason"] == "no_vendor"
            assert "paged_sid" in failed.read  # the on-call PM's page, read back by its SID


def test_an_offer_the_run_no_longer_records_is_shame() -> None:
    """The run rewritten under an offer's claim (its offer to another vendor): the watcher's read
    of the run, not the claim, decides."""
    for stack in _stack(DAY_START):
        wo_id = _open(stack, "the kitchen tap is loose and drips down the counter")
        _answer(stack, wo_id, "details", items=("access",))
        run = _run(stack, wo_id)
        (offer,) = run.offers
        forged = run.changed(
            stack.clock.now(), offers=(offer.model_copy(update={"vendor_id": "v-sparky"}),)
        )
        (envelope,) = [e for e in stack.domain_events() if e["detail-type"] == "wo.offered"]
        detail = envelope["detail"]
        event = DomainEvent.model_validate(
            json.loads(detail) if isinstance(detail, str) else detail
        )
        assert stack.watcher.check(event).verdict == "evidence"
        stack.dispatch.deps.runs.put(forged, run.version)
        row = stack.watcher.check(event)
        assert (row.verdict, row.kind) == ("shame", "mismatch")
        assert "vendor_id" in row.detail
