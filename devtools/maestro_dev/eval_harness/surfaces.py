"""The reads a checkpoint is graded on, each from a surface the pipeline does not hand back.

- which packages a step produced: the pipeline state machine's executions (ListExecutions and
  each execution's *input*), never their output;
- decisions, outcomes and completions: the decision log, read by package;
- work orders: the WO store (a consistent scan);
- messages: each SID the outcome records name, fetched by SID from the messaging surface
  through the messenger's own reader (Twilio's Messages API through the twilio SDK, on the
  embedded stack its loopback Twilio; the messages table for the recording messenger);
- evidence and shame: the ledger the watcher writes, read by package, after the watcher has
  read every claim made so far (the sweeper's ``missing_event`` rows come 10 virtual minutes
  after a package, so a checkpoint sees those only if its scenario waits that long);
- a created work order's dispatch (its execution runs beside the packages, on its own
  machine): the run from the dispatch store, and the ledger's rows for the run (package id
  ``dispatch:<WO id>``) claimed since the previous checkpoint, whose texts are fetched by SID
  like the packages' (each ``message.sent`` row's subject).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from maestro.adapters.ddb import scan_all
from maestro.adapters.dynamodb_buffer import DynamoConversationBuffer
from maestro.adapters.dynamodb_consent import DynamoConsentStore
from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.adapters.dynamodb_dispatch import DynamoDispatchStore
from maestro.adapters.dynamodb_pending import DynamoPendingStore
from maestro.adapters.dynamodb_state import DynamoStateStore
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.dispatch import DispatchRun, run_package_id
from maestro.domain.execution_input import ExecutionInput
from maestro.domain.ledger import LedgerRow
from maestro.domain.models import WorkOrder
from maestro.domain.timeline import NoteEntry, photos_on
from maestro.ports.conversations import FlushClaim
from maestro_dev.eval_harness.lenses import (
    PackageContents,
    PackageReads,
    PendingRead,
    Reads,
    SentRecord,
)

if TYPE_CHECKING:
    from maestro_dev.eval_harness.environment import EvalStack


class StackSurfaces:
    def __init__(self, stack: EvalStack) -> None:
        self._stack = stack
        self._log = DynamoDecisionLog(stack.ddb, stack.tables["decisions"])
        self._work_orders = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
        self._dispatch = DynamoDispatchStore(stack.ddb, stack.tables["dispatch"])
        self._timeline = DynamoTimeline(stack.ddb, stack.tables["timeline"])
        self._states = DynamoStateStore(stack.ddb, stack.tables["state"])
        self._pending = DynamoPendingStore(stack.ddb, stack.tables["pending"])
        self._consent = DynamoConsentStore(stack.ddb, stack.tables["conversations"])
        self._buffer = DynamoConversationBuffer(
            stack.ddb, stack.tables["messages"], stack.tables["conversations"]
        )
        self._inputs: dict[str, ExecutionInput] = {}

    def execution_arns(self) -> list[str]:
        return [e["executionArn"] for e in self._stack.executions()]

    def package_of(self, execution_arn: str) -> str:
        described = self._stack.sfn.describe_execution(executionArn=execution_arn)
        started = ExecutionInput.model_validate(json.loads(described["input"]))
        self._inputs[started.package_id] = started
        return started.package_id

    def contents(self, package_id: str) -> PackageContents | None:
        """The package's trigger (its execution's input, as the flusher started it) and its
        messages read back from the conversation buffer by the seqs that input names."""
        started = self._inputs.get(package_id)
        if started is None:
            arn = next(
                (
                    e["executionArn"]
                    for e in self._stack.executions()
                    if e.get("name") == package_id
                ),
                None,
            )
            if arn is None or self.package_of(arn) != package_id:
                return None
            started = self._inputs[package_id]
        ref = started.package_ref
        claim = FlushClaim(
            conversation_id=ref.conversation_id,
            flush_number=ref.flush_number,
            package_id=ref.package_id,
            after_seq=ref.after_seq,
            through_seq=ref.through_seq,
            trigger=ref.trigger,
            claimed_at=ref.flushed_at,
        )
        messages = self._buffer.messages_for(claim)
        return PackageContents(
            trigger=ref.trigger.value,
            sender=ref.sender_phone,
            texts=tuple(m.body for m in messages),
            media=sum(len(m.media) for m in messages),
        )

    def package(self, package_id: str) -> PackageReads:
        return PackageReads(
            package_id=package_id,
            decisions=tuple(self._log.for_package(package_id)),
            outcomes=tuple(self._log.outcomes_for(package_id)),
            completion=self._log.completion_for(package_id),
            contents=self.contents(package_id),
        )

    def timelines(self, wo_ids: Iterable[str]) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
        """Each WO's timeline notes, oldest first, and the photos it holds (the timeline
        table)."""
        entries = {wo_id: self._timeline.for_wo(wo_id) for wo_id in wo_ids}
        notes = {
            wo_id: tuple(e.note for e in found if isinstance(e, NoteEntry))
            for wo_id, found in entries.items()
        }
        return notes, {wo_id: photos_on(found) for wo_id, found in entries.items()}

    def interrupted(self, wo_ids: Iterable[str]) -> dict[str, bool]:
        """Each WO's routing state (the state table): whether an emergency interrupted it."""
        states = {wo_id: self._states.get(wo_id) for wo_id in wo_ids}
        return {w: s is not None and s.interrupted_by is not None for w, s in states.items()}

    def pending(
        self, party_ids: Iterable[str], runs: Iterable[DispatchRun]
    ) -> tuple[PendingRead, ...]:
        """What is out now: each party's open questions and held confirmations (the pending
        store), and every open dispatch offer (the dispatch store)."""
        out: list[PendingRead] = []
        for party_id in party_ids:
            questions, holds = self._pending.open_items(party_id)
            out += [
                PendingRead(
                    kind="question", party_id=party_id, text=q.question, wo_ids=q.candidate_ids
                )
                for q in questions
            ]
            out += [
                PendingRead(
                    kind="hold",
                    party_id=party_id,
                    text=h.proposal,
                    wo_ids=tuple(h.call.wo_ids) if h.call else (),
                )
                for h in holds
            ]
        for run in runs:
            out += [
                PendingRead(kind="offer", party_id=o.vendor_id, wo_ids=(run.wo_id,))
                for o in run.offers
                if o.outcome == "open"
            ]
        return tuple(out)

    def opted_out(self, phones: Iterable[str]) -> dict[str, bool]:
        states = {phone: self._consent.state(phone) for phone in phones}
        return {phone: s is not None and s.opted_out for phone, s in states.items()}

    def work_orders(self) -> dict[str, WorkOrder]:
        table = self._stack.tables["work_orders"]
        found: dict[str, WorkOrder] = {}
        for item in scan_all(self._stack.ddb, TableName=table, ConsistentRead=True):
            wo = self._work_orders.get(item["wo_id"]["S"])
            if wo is not None:
                found[wo.wo_id] = wo
        return found

    def fetch_message(self, sid: str) -> SentRecord | None:
        read = self._stack.watcher.deps.messages.read(sid)
        if read is None:
            return None
        return SentRecord(sid=read.sid, to=read.to, body=read.body, status=read.status)

    def ledger(self, package_ids: Iterable[str]) -> list[LedgerRow]:
        """The packages' Evidence and Shame rows, once the watcher has read every claim."""
        self._stack.settle()
        return [row for p in package_ids for row in self._stack.ledger.for_package(p)]

    def reads(
        self,
        package_ids: Iterable[str],
        seeded_versions: dict[str, int],
        *,
        every_package: Iterable[str] = (),
        since: datetime | None = None,
        parties: dict[str, str] | None = None,
    ) -> Reads:
        """The covered packages' reads, and the dispatch of every WO the scenario's packages
        (``every_package``, so far) created, with its rows claimed after ``since``; what is
        out to ``parties`` (party id → phone) and their consent."""
        parties = parties or {}
        package_ids = tuple(package_ids)
        packages = tuple(self.package(p) for p in package_ids)
        created = tuple(
            dict.fromkeys(
                o.created_wo_id
                for p in (*every_package, *package_ids)
                for o in self._log.outcomes_for(p)
                if o.created_wo_id
            )
        )
        runs = {wo_id: run for wo_id in created if (run := self._dispatch.get(wo_id))}
        rows = self.ledger(package_ids)
        dispatch_rows = [
            row
            for row in self.ledger(run_package_id(wo_id) for wo_id in runs)
            if since is None or row.occurred_at is None or row.occurred_at > since
        ]
        sids = [s for p in packages for o in p.outcomes for s in o.message_sids]
        sids += [r.subject_id for r in dispatch_rows if r.event_type == "message.sent"]
        messages = tuple(m for s in dict.fromkeys(sids) if (m := self.fetch_message(s)))
        rows += dispatch_rows
        work_orders = self.work_orders()
        every_run = [run for wo_id in work_orders if (run := self._dispatch.get(wo_id))]
        notes, photos = self.timelines(work_orders)
        return Reads(
            packages=packages,
            work_orders=work_orders,
            notes=notes,
            photos=photos,
            interrupted=self.interrupted(work_orders),
            pending=self.pending(parties, every_run),
            opted_out=self.opted_out(parties.values()),
            seeded_versions=seeded_versions,
            created=created,
            dispatch=runs,
            messages=messages,
            evidence=tuple(_row(r) for r in rows if r.verdict == "evidence"),
            shame=tuple(_row(r) for r in rows if r.standing_shame),
        )


def _row(row: LedgerRow) -> dict[str, Any]:
    """A ledger row for the lenses, with the claim in words for a failing finding."""
    verdict = row.kind or row.verdict
    return {
        **row.model_dump(mode="json"),
        "claim": f"{verdict}: {row.event_type} {row.subject_id}: {row.detail}",
    }
