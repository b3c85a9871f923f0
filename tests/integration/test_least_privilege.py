"""The table of what each function may touch (``maestro.access``) is true: scenarios played on the
embedded stack, every DynamoDB call seen on the wire (``maestro_dev.local.faults.Wire``), tagged
with the stage that made it, and each stage's calls checked against its function's row.

The scenarios: a repair text that opens a work order, a clarification and its answer, a held
cancel released by YES, an emergency, an unknown number (and its emergency), a package that
fails open, a package paused at its step gates, the hourly digest's page; then, with a scripted
model answering like a good one (so the severity probe and the model budgets run), the fault
matrix's repair, gas and failing scenarios, and its repair with the bus down for the act step
(the sweeper's Shame rows); and a page the act step sends (it reads who is on call). Twilio's
status callbacks, which the stage tags leave untagged, are the inbound function's too: every
request through the webhook is tagged as it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from embedded import flush, open_wo, release_all_gates, sms

from maestro.access import FUNCTION_TABLES, PIPELINE_STEPS, Access
from maestro.brain.model_port import ModelRequest
from maestro_dev.local.fault_matrix import Cell, Matrix
from maestro_dev.local.faults import DYNAMODB_WRITES, Crash, Stages, Wire
from maestro_dev.local.stack import SWEEP_WINDOW_SECONDS, LocalStack
from maestro_dev.local.world import MARIA, seed, seed_directory
from maestro_dev.scripted import Scripted, ScriptedModel

pytestmark = pytest.mark.integration

FUNCTION_OF_STAGE = {"webhook": "inbound_sms", "fallback": "inbound_fallback"}
"""Stages are named as their functions, but for the inbound webhook's and its fallback drain's."""
NOT_A_FUNCTION = frozenset({"announce"})
"""The state machine's own EventBridge integration (its role is checked in tests/infra)."""
UNKNOWN = "+14155550177"  # a number the directory does not have

Touched = dict[str, dict[str, set[str]]]  # function → table → the operations it called
Calls = Counter[tuple[str | None, str, str, tuple[str, ...]]]  # Wire.calls


def _access(operations: set[str]) -> Access:
    return "write" if operations & DYNAMODB_WRITES else "read"


def _touched(calls: Calls) -> Touched:
    touched: Touched = defaultdict(lambda: defaultdict(set))
    for (stage, service, operation, targets), _ in calls.items():
        if stage is None or service != "dynamodb":
            continue  # the harness's own setup and reads
        function = FUNCTION_OF_STAGE.get(stage, stage)
        for table in targets:
            touched[function][table].add(operation)
    return touched


def _webhook_tagged(stack: LocalStack, wire: Wire) -> None:
    """Every request through the webhook is the inbound function's, status callbacks too."""
    http: Callable[[dict[str, Any]], dict[str, Any]] = stack.http

    def tagged(event: dict[str, Any]) -> dict[str, Any]:
        with wire.in_stage("webhook"):
            return http(event)

    stack.http = tagged  # type: ignore[method-assign]


def _settle(stack: LocalStack) -> None:
    stack.advance(5)
    stack.poll_watcher()
    stack.advance(SWEEP_WINDOW_SECONDS + 60)
    stack.sweep()


def _offline_stories() -> Calls:
    """The offline brain, the recording messenger (the watcher reads texts back from the
    messages table, as it does in a stack without a Twilio account)."""
    with Wire() as wire, LocalStack(messenger="recording") as stack:
        seed(stack)
        stages = Stages(stack, wire)
        _webhook_tagged(stack, wire)
        sms(stack, "the bathroom fan rattles whenever it runs")  # a repair: a new work order
        flush(stack)
        open_wo(stack, "WO-204", "leak under the kitchen sink")
        open_wo(stack, "WO-211", "leak from the bathroom ceiling")
        sms(stack, "the leak is back")  # two candidates: a clarification
        flush(stack)
        sms(stack, "the kitchen one")  # its answer
        flush(stack)
        sms(stack, "please cancel both of them")  # held until YES
        flush(stack)
        sms(stack, "YES")
        flush(stack)
        sms(stack, "I smell gas in the hallway")  # an emergency: escalated before the lease
        flush(stack)
        sms(stack, "hello, is this the landlord?", sender=UNKNOWN)  # an unknown number
        flush(stack)
        sms(stack, "there is smoke coming from the basement", sender=UNKNOWN)
        flush(stack)
        stages.crash(Crash("dispose", "before", 1, "ValueError"))  # fails for good: fail-open
        sms(stack, "the dishwasher won't drain")
        flush(stack)
        # The webhook fails once: Twilio's fallback URL keeps the text, the drain stores it.
        stages.crash(Crash("webhook", "before", 1))
        kept = stack.twilio.text(MARIA.phone, "the front door buzzer stopped working")
        assert [status for _, status in kept.attempts] == [502, 200]
        flush(stack)
        _settle(stack)
        assert [crash.crashed for crash in stages.crashes] == [1, 1]
    return wire.calls


def _stepped_story() -> Calls:
    """A package in step mode: it pauses at each step gate until released."""
    with Wire() as wire, LocalStack(step_mode=True) as stack:
        seed(stack)
        Stages(stack, wire)
        _webhook_tagged(stack, wire)
        sms(stack, "the hallway light flickers", sender=MARIA.phone)
        stack.advance(stack.idle + 1)
        assert release_all_gates(stack) > 0
        # A number nobody knows: a line of the hour's digest, whose page goes through Twilio
        # once the hour is over (the digest function).
        sms(stack, "who do I ask about the bike storage?", sender=UNKNOWN)
        stack.advance(stack.idle + 1)
        assert release_all_gates(stack) > 0
        stack.advance(3600)
        assert any(m.body.startswith("[INFO] maestro digest") for m in stack.outbox())
    return wire.calls


def _reasoned_page(request: ModelRequest) -> Scripted | None:
    """A model that hears no emergency at the pre-check and proposes a page when it reasons."""
    if request.purpose in ("probe", "precheck"):
        return {"route": "reasoning", "severity": "none", "confidence": 0.8, "evidence": ""}
    if request.purpose == "reasoning":
        page = {"reason": "emergency", "severity": "urgent", "hazard": "a bowed ceiling"}
        return {"actions": [{"lane": "escalate", "confidence": 0.95, "params": page}]}
    return None


def _paged_by_act_story() -> Calls:
    """A page the act step sends (the model proposes it): it reads who is on call."""
    with Wire() as wire, LocalStack(model=ScriptedModel(responder=_reasoned_page)) as stack:
        seed(stack)
        Stages(stack, wire)
        _webhook_tagged(stack, wire)
        sms(stack, "could someone listen to the odd knocking in the wall tonight")
        flush(stack)
        assert any(m.body.startswith("[URGENT]") for m in stack.outbox())
    return wire.calls


def _dispatch_story() -> Calls:
    """Work orders' executions (docs/dispatch.md): one gathers, is offered to Vic and assigned
    to him; one goes on at the gather deadline, its offer to an electrician lapses (they are
    told) and the on-call PM is paged. The waits are completed with the answers the package
    pipeline sends."""
    from maestro.adapters.stepfunctions import StepFunctionsTaskTokens
    from maestro.domain.directory import Directory, Trade, Vendor
    from maestro.domain.dispatch import WaitAnswer

    with Wire() as wire, LocalStack() as stack:
        seed(stack)
        sparks = Vendor(
            vendor_id="v-lp-sparks",
            name="LP Sparks",
            phone="+14155550188",
            trades=(Trade.ELECTRICAL,),
        )
        seed_directory(stack, Directory(vendors=(sparks,)))
        Stages(stack, wire)
        _webhook_tagged(stack, wire)
        tokens = StepFunctionsTaskTokens(stack.sfn)

        def answer(wo_id: str, said: str) -> None:
            run = stack.dispatch.deps.runs.get(wo_id)
            assert run is not None
            assert run.waiting is not None
            reply = WaitAnswer(kind=run.waiting.kind, answer=said)  # type: ignore[arg-type]
            tokens.succeed(run.waiting.token, reply.model_dump(mode="json"))
            stack.wait_for_executions(allow_paused=True)

        sms(stack, "the shower tray is leaking into the flat below")
        flush(stack)
        (leak,) = [e["name"] for e in stack.wo_executions()]
        answer(leak, "details")
        answer(leak, "accept")
        assert stack.wo_execution(leak)["status"] == "SUCCEEDED"
        # A routine electrical job. "flickering and buzzing" is raised by the safety floor's
        # learned half since the eighth round (0.98, threshold 0.975): a page, not a dispatch.
        sms(stack, "the hallway light keeps flickering")
        flush(stack)
        stack.advance(7 * 3600)  # the gather deadline, then the offer's: the PM paged
        assert [e["status"] for e in stack.wo_executions()] == ["SUCCEEDED", "SUCCEEDED"]
    return wire.calls


def _modelled_stories() -> Calls:
    """The fault matrix's scenarios on its scripted model: the severity probe (the flusher reads
    the sender and their WOs, and stores its verdict on the message) and every model step's
    budget (in the conversations table) run."""
    with Matrix() as matrix:
        _webhook_tagged(matrix.stack, matrix.wire)
        for scenario in ("repair", "gas", "failing"):
            matrix.baseline(scenario)
        # The bus down for the act step through every retry: its effects have no event, and
        # the sweeper writes their Shame rows.
        lost = matrix.run(Cell("bus-down", ("act",), "repair"))
        assert any("shame" in outcome for outcome in lost.outcomes.values()), lost.outcomes
        return matrix.wire.calls


@pytest.fixture(scope="module")
def touched() -> Touched:
    return _touched(
        _offline_stories()
        + _stepped_story()
        + _paged_by_act_story()
        + _dispatch_story()
        + _modelled_stories()
    )


def test_every_function_ran_and_touched_only_its_rows_tables(touched: Touched) -> None:
    # wo_start touches no table (it starts executions: tests/integration/test_dispatch.py).
    with_tables = {function for function, row in FUNCTION_TABLES.items() if row}
    assert set(touched) - NOT_A_FUNCTION == with_tables, "a function never ran"
    beyond: list[str] = []
    for function, tables in sorted(touched.items()):
        if function in NOT_A_FUNCTION:
            assert not tables, f"{function} touched {sorted(tables)}"
            continue
        row = FUNCTION_TABLES[function]
        for table, operations in sorted(tables.items()):
            if table not in row:
                beyond.append(f"{function}: {table} ({sorted(operations)}), not in its row")
            elif _access(operations) == "write" and row[table] == "read":
                beyond.append(f"{function}: wrote {table} ({sorted(operations)}), read-only")
    assert beyond == []


def test_the_directory_is_read_only_for_every_pipeline_step(touched: Touched) -> None:
    for step in PIPELINE_STEPS:
        operations = touched[step].get("parties", set())
        assert not operations & DYNAMODB_WRITES, step
    assert {step for step in PIPELINE_STEPS if "parties" in touched[step]} >= {
        "escalate",
        "lease",
        "act",
    }


def test_every_grant_of_every_row_was_used(touched: Touched) -> None:
    """The other way round: no row grants what no scenario needed (a table, or writing it)."""
    unused = [
        f"{function}: {table} ({access})"
        for function, row in sorted(FUNCTION_TABLES.items())
        for table, access in sorted(row.items())
        if table not in touched[function]
        or (access == "write" and _access(touched[function][table]) == "read")
    ]
    assert unused == []
