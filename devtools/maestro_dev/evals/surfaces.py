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

from maestro.adapters.dynamodb_dispatch import DynamoDispatchStore
from maestro.adapters.dynamodb_memory import DynamoDecisionLog, DynamoWorkOrderStore
from maestro.domain.dispatch import run_package_id
from maestro.domain.ledger import LedgerRow
from maestro.domain.models import WorkOrder
from maestro.evals.lenses import PackageReads, Reads, SentRecord

if TYPE_CHECKING:
    from maestro_dev.evals.environment import EvalStack


class StackSurfaces:
    def __init__(self, stack: EvalStack) -> None:
        self._stack = stack
        self._log = DynamoDecisionLog(stack.ddb, stack.tables["decisions"])
        self._work_orders = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
        self._dispatch = DynamoDispatchStore(stack.ddb, stack.tables["dispatch"])

    def execution_arns(self) -> list[str]:
        return [e["executionArn"] for e in self._stack.executions()]

    def package_of(self, execution_arn: str) -> str:
        described = self._stack.sfn.describe_execution(executionArn=execution_arn)
        return str(json.loads(described["input"])["package_id"])

    def package(self, package_id: str) -> PackageReads:
        return PackageReads(
            package_id=package_id,
            decisions=tuple(self._log.for_package(package_id)),
            outcomes=tuple(self._log.outcomes_for(package_id)),
            completion=self._log.completion_for(package_id),
        )

    def work_orders(self) -> dict[str, WorkOrder]:
        table = self._stack.tables["work_orders"]
        found: dict[str, WorkOrder] = {}
        kwargs: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
        while True:
            page = self._stack.ddb.scan(**kwargs)
            for item in page["Items"]:
                wo = self._work_orders.get(item["wo_id"]["S"])
                if wo is not None:
                    found[wo.wo_id] = wo
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

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
    ) -> Reads:
        """The covered packages' reads, and the dispatch of every WO the scenario's packages
        (``every_package``, so far) created, with its rows claimed after ``since``."""
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
        return Reads(
            packages=packages,
            work_orders=self.work_orders(),
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
