"""``maestro wo show WO-… [--json]`` and ``maestro wo list [--status S] [--property P] [--json]``,
on ``maestro serve`` (``--url``, the default: its operator routes ``/local/wo`` and
``/local/wos``) or on a deployed stack (``--stack`` / ``--env``, through boto3 and the stack's
table outputs). docs/work-orders.md.

One read for both: :func:`show` and :func:`listing` take the stores (the same DynamoDB adapters
the functions use) and a Step Functions client, and return :class:`WoShow` / :class:`WoList`,
the JSON ``--json`` prints. What they return is masked here, once, before it leaves: every phone
number written anywhere in it (a note, a summary) is cut to its last 4 digits, and the task
token of an open wait is never part of it (whoever holds it can answer for the party).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict

from maestro.adapters.dynamodb_dispatch import DynamoDispatchStore
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore, WoListRead
from maestro.domain.common import truncate
from maestro.domain.dispatch import DispatchRun, Wait
from maestro.domain.models import TERMINAL_STATUSES, WorkOrder, WorkOrderStatus
from maestro.domain.privacy import mask_phone_numbers
from maestro.stack_outputs import OUTPUT_WORK_ORDER_MACHINE, table_output
from maestro_dev.cloud import CloudStack
from maestro_dev.targets import cloud_target, local_call

__all__ = [
    "LIST_ROUTE",
    "SHOW_ROUTE",
    "STATUS_CHOICES",
    "ExecutionView",
    "WoList",
    "WoShow",
    "WoStores",
    "add_parser",
    "listing",
    "show",
    "statuses_for",
]

SHOW_ROUTE = "/local/wo"
LIST_ROUTE = "/local/wos"
STATUS_CHOICES = ("unfinished", "all", *(s.value for s in WorkOrderStatus))
LIST_SUMMARY_CHARS = 60
"""A listed WO is one line: its summary cut to this (``wo show`` prints it whole)."""
_HISTORY_PAGE = 25
"""Events read back from the end of an execution's history to find the state it is in."""


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WaitView(_View):
    """An open wait as an operator sees it: whose answer, until when; never its task token."""

    kind: str
    party_id: str
    started_at: datetime
    deadline: datetime
    offer_index: int | None = None
    vendor_id: str | None = None
    question_sid: str | None = None

    @classmethod
    def of(cls, wait: Wait) -> WaitView:
        return cls.model_validate(wait.model_dump(exclude={"token"}))


class DispatchView(_View):
    """The WO's dispatch run (``DispatchRun``) with its open wait shown without the token."""

    run: dict[str, Any]
    waiting: WaitView | None

    @classmethod
    def of(cls, run: DispatchRun) -> DispatchView:
        return cls(
            run=run.model_dump(mode="json", exclude={"waiting"}),
            waiting=WaitView.of(run.waiting) if run.waiting is not None else None,
        )


class ExecutionView(_View):
    """The WO's Step Functions execution: DescribeExecution, and the last state it entered
    (GetExecutionHistory, read from the end)."""

    arn: str
    status: str
    started_at: datetime | None = None
    stopped_at: datetime | None = None
    current_state: str | None = None


class WoShow(_View):
    work_order: dict[str, Any]
    timeline: list[dict[str, Any]]
    dispatch: DispatchView | None
    execution: ExecutionView | None


class WoList(_View):
    read: WoListRead
    status: str
    """As asked: one status, ``unfinished`` or ``all``."""
    statuses: list[str] | None
    property_id: str | None
    work_orders: list[dict[str, Any]]


class WoStores:
    """The tables `maestro wo` reads, and Step Functions: built from a DynamoDB client and the
    table names (the embedded stack's, or a deployed stack's outputs)."""

    def __init__(
        self,
        dynamodb: Any,
        tables: dict[str, str],
        stepfunctions: Any,
        machine_arn: str | None = None,
    ) -> None:
        self.work_orders = DynamoWorkOrderStore(dynamodb, tables["work_orders"])
        self.timeline = DynamoTimeline(dynamodb, tables["timeline"])
        self.dispatch = DynamoDispatchStore(dynamodb, tables["dispatch"])
        self.sfn = stepfunctions
        self.machine_arn = machine_arn
        """The work order state machine, when known: a WO's execution is named by its id, so
        it is found even before its first step wrote the run."""


def _masked(value: Any) -> Any:
    """Every string in a JSON value with its phone numbers cut to their last 4 digits."""
    if isinstance(value, str):
        return mask_phone_numbers(value)
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _execution_arn(stores: WoStores, wo_id: str, run: DispatchRun | None) -> str | None:
    if run is not None and run.execution_arn:
        return run.execution_arn
    if stores.machine_arn and ":stateMachine:" in stores.machine_arn:
        return stores.machine_arn.replace(":stateMachine:", ":execution:", 1) + f":{wo_id}"
    return None


def _execution(sfn: Any, arn: str) -> ExecutionView | None:
    try:
        described = sfn.describe_execution(executionArn=arn)
    except sfn.exceptions.ExecutionDoesNotExist:
        return None
    history = sfn.get_execution_history(
        executionArn=arn, reverseOrder=True, maxResults=_HISTORY_PAGE
    )
    # The latest state entered, by event id (whichever order a backend returns the page in).
    entered = [e for e in history.get("events", []) if "stateEnteredEventDetails" in e]
    latest = max(entered, key=lambda e: int(e["id"]), default=None)
    current = str(latest["stateEnteredEventDetails"]["name"]) if latest is not None else None
    return ExecutionView(
        arn=arn,
        status=str(described["status"]),
        started_at=described.get("startDate"),
        stopped_at=described.get("stopDate"),
        current_state=current,
    )


def show(stores: WoStores, wo_id: str) -> WoShow | None:
    """The WO, its timeline (oldest first), its dispatch run and its execution; None when no
    WO has that id."""
    wo = stores.work_orders.get(wo_id)
    if wo is None:
        return None
    run = stores.dispatch.get(wo_id)
    arn = _execution_arn(stores, wo_id, run)
    view = WoShow(
        work_order=wo.model_dump(mode="json"),
        timeline=[entry.model_dump(mode="json") for entry in stores.timeline.for_wo(wo_id)],
        dispatch=DispatchView.of(run) if run is not None else None,
        execution=_execution(stores.sfn, arn) if arn else None,
    )
    return WoShow.model_validate(_masked(view.model_dump(mode="json")))


def statuses_for(choice: str) -> frozenset[WorkOrderStatus] | None:
    """``--status``: one status, ``unfinished`` (all but completed and cancelled) or ``all``."""
    if choice == "all":
        return None
    if choice == "unfinished":
        return frozenset(WorkOrderStatus) - TERMINAL_STATUSES
    return frozenset({WorkOrderStatus(choice)})


def listing(stores: WoStores, status: str, property_id: str | None) -> WoList:
    statuses = statuses_for(status)
    found, how = stores.work_orders.listed(statuses, property_id)
    view = WoList(
        read=how,
        status=status,
        statuses=sorted(s.value for s in statuses) if statuses is not None else None,
        property_id=property_id,
        work_orders=[wo.model_dump(mode="json") for wo in found],
    )
    return WoList.model_validate(_masked(view.model_dump(mode="json")))


# -- the command ----------------------------------------------------------------------------------

Target = Callable[[argparse.ArgumentParser], None]


def add_parser(sub: argparse._SubParsersAction, target: Target) -> None:  # type: ignore[type-arg]
    """``maestro wo show|list``; ``target`` adds the --url/--stack/--env options."""
    group = sub.add_parser("wo", help="work orders: one with its timeline and dispatch, or a list")
    commands = group.add_subparsers(dest="wo_command", required=True)

    one = commands.add_parser(
        "show",
        help="a work order, its timeline, its dispatch run and its execution",
        description="The WO record, its timeline (oldest first), its dispatch run (step, what "
        "was gathered, the judgment and its ranked vendors, every offer and its outcome, the "
        "open wait without its token) and its execution (status, the state it is in). Phone "
        "numbers are shown by their last 4 digits.",
    )
    one.add_argument("wo_id", help="WO-…")
    one.add_argument("--json", action="store_true", help="one JSON object")
    target(one)
    one.set_defaults(handler=cmd_show)

    many = commands.add_parser(
        "list",
        help="work orders by status and property",
        description="Work orders, oldest first. A property's unfinished ones (--property P, "
        "with --status unfinished or one unfinished status) are read from the table's "
        "open_by_property index; any other question is a paged scan of the whole table "
        "(fine for an operator, it reads every WO). The output says which it was.",
    )
    many.add_argument(
        "--status",
        choices=STATUS_CHOICES,
        default="unfinished",
        metavar="S",
        help=f"one of {', '.join(STATUS_CHOICES[2:])}; 'unfinished' (the default: all but "
        "completed and cancelled) or 'all'",
    )
    many.add_argument("--property", dest="property_id", metavar="P", help="one property's id")
    many.add_argument("--json", action="store_true", help="one JSON object")
    target(many)
    many.set_defaults(handler=cmd_list)


_CLOUD_WO_TABLES = ("work_orders", "timeline", "dispatch")


def cloud_wo_stores(cloud: CloudStack) -> WoStores:
    """What `maestro wo show|list` reads on a deployed stack: the work orders, timeline and
    dispatch tables its outputs name, and Step Functions (the execution a WO's dispatch run
    names)."""
    names = {name: cloud.outputs.get(table_output(name)) for name in _CLOUD_WO_TABLES}
    missing = sorted(table_output(name) for name, table in names.items() if table is None)
    if missing:
        raise LookupError(f"stack {cloud.stack_name} has no output {missing}")
    return WoStores(
        cloud.dynamodb,
        {name: table for name, table in names.items() if table is not None},
        cloud.stepfunctions,
        machine_arn=cloud.outputs.get(OUTPUT_WORK_ORDER_MACHINE),
    )


def _read(
    args: argparse.Namespace, path: str, query: dict[str, str]
) -> tuple[dict[str, Any] | None, str]:
    """(the answer's JSON, or None and why not) from the local server."""
    from urllib.parse import urlencode

    status, body = local_call(args, "GET", f"{path}?{urlencode(query)}")
    if status != 200:
        return None, f"{status} {body}"
    answer: dict[str, Any] = json.loads(body)
    return answer, ""


def cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    cloud = cloud_target(args)
    if cloud is not None:
        found = show(cloud_wo_stores(cloud), args.wo_id)
        if found is None:
            print(f"no work order {args.wo_id} in {cloud.stack_name}", file=out)
            return 1
        view = found
    else:
        answer, why = _read(args, SHOW_ROUTE, {"id": args.wo_id})
        if answer is None:
            print(why, file=out)
            return 1
        view = WoShow.model_validate(answer)
    if args.json:
        print(view.model_dump_json(), file=out)
    else:
        print(render_show(view), file=out)
    return 0


def cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    cloud = cloud_target(args)
    if cloud is not None:
        view = listing(cloud_wo_stores(cloud), args.status, args.property_id)
    else:
        query = {"status": args.status}
        if args.property_id:
            query["property"] = args.property_id
        answer, why = _read(args, LIST_ROUTE, query)
        if answer is None:
            print(why, file=out)
            return 1
        view = WoList.model_validate(answer)
    if args.json:
        print(view.model_dump_json(), file=out)
    else:
        print(render_list(view), file=out)
    return 0


# -- what a person reads --------------------------------------------------------------------------


def _at(value: str | datetime | None) -> str:
    if value is None:
        return "-"
    at = datetime.fromisoformat(value) if isinstance(value, str) else value
    return at.strftime("%Y-%m-%d %H:%M:%SZ")


def _wo_line(wo: WorkOrder, summary_chars: int | None = None) -> str:
    where = " ".join(
        part
        for part in (
            f"property {wo.property_id}" if wo.property_id else "",
            f"unit {wo.unit}" if wo.unit else "",
        )
        if part
    )
    return (
        f"{wo.wo_id}  {wo.status.value:<11} {wo.urgency.value:<9} {wo.category:<12} "
        f"{where or '-'}  {truncate(wo.summary, summary_chars) if summary_chars else wo.summary}"
    )


def render_list(view: WoList) -> str:
    wos = [WorkOrder.model_validate(wo) for wo in view.work_orders]
    lines = [_wo_line(wo, LIST_SUMMARY_CHARS) for wo in wos]
    which = "any status" if view.status == "all" else view.status
    where = f" of property {view.property_id}" if view.property_id else ""
    noun = "work order" if len(wos) == 1 else "work orders"
    lines.append(f"{len(wos)} {noun} ({which}{where}; read by {view.read})")
    return "\n".join(lines)


def _entry_line(entry: dict[str, Any]) -> str:
    who = entry.get("who") or "maestro"
    if entry.get("who_role"):
        who += f" ({entry['who_role']})"
    line = f"  {_at(entry['at'])}  {entry['kind']:<6} {who}: {entry['what']}"
    files = [
        f"      {media.get('content_type') or 'unknown type'}  {media['url']}"
        for media in entry.get("media") or []
    ]
    return "\n".join([line, *files])


def _dispatch_lines(dispatch: DispatchView) -> list[str]:
    run = DispatchRun.model_validate({**dispatch.run, "waiting": None})
    lines = [
        f"dispatch: {run.step} (run v{run.version}; started {_at(run.started_at)}, "
        f"updated {_at(run.updated_at)})"
    ]
    if (gathered := run.gathered) is not None:
        if gathered.skipped:
            lines.append(f"  gather: skipped ({gathered.skipped})")
        else:
            lines.append(
                f"  gather: asked {', '.join(gathered.asked) or 'nothing'}; "
                f"have {', '.join(gathered.have) or 'nothing'}; "
                f"{len(gathered.photos)} photo entries"
                + ("; went on at the deadline" if gathered.by_deadline else "")
            )
    if (judged := run.judgment) is not None:
        lines.append(
            f"  judgment: {judged.priority.value} {judged.trade}, NTE ${judged.nte_usd}, "
            f"approval {'needed' if judged.approval_needed else 'not needed'}"
            + (f" ({run.approval})" if run.approval else "")
            + f", {'after hours' if judged.after_hours else 'in hours'}, "
            f"offer timeout {judged.offer_timeout_seconds} s"
        )
        lines += [f"    because {reason}" for reason in judged.reasons]
        for n, vendor in enumerate(judged.vendors, start=1):
            rating = f", rating {vendor.rating:.1f}" if vendor.rating is not None else ""
            lines.append(
                f"    {n}. {vendor.name} ({vendor.vendor_id}; rank {vendor.rank}, "
                f"{vendor.open_jobs} open jobs{rating}"
                + (", after hours" if vendor.after_hours else "")
                + ")"
                + (f": {vendor.why}" if vendor.why else "")
            )
    for offer in run.offers:
        answered = f", answered {_at(offer.answered_at)}" if offer.answered_at else ""
        lines.append(
            f"  offer {offer.index}: {offer.vendor_id} {offer.outcome} "
            f"(sent {_at(offer.sent_at)}{answered}" + (f", {offer.sid}" if offer.sid else "") + ")"
        )
    if (wait := dispatch.waiting) is not None:
        which = f" {wait.offer_index}" if wait.offer_index else ""
        lines.append(
            f"  waiting: {wait.kind}{which} for {wait.party_id}'s answer until {_at(wait.deadline)}"
        )
    if run.outcome:
        lines.append(f"  outcome: {run.outcome}")
    return lines


def render_show(view: WoShow) -> str:
    wo = WorkOrder.model_validate(view.work_order)
    lines = [
        _wo_line(wo),
        f"  tenant {wo.tenant_id}; vendor {wo.vendor_id or '-'}; v{wo.version}; "
        f"created {_at(wo.created_at)}, updated {_at(wo.updated_at)}",
    ]
    if wo.visit is not None:
        lines.append(f"  visit {_at(wo.visit.start)} to {_at(wo.visit.end)}")
    lines.append(f"timeline ({len(view.timeline)}):")
    lines += [_entry_line(entry) for entry in view.timeline] or ["  (nothing yet)"]
    if view.dispatch is not None:
        lines += _dispatch_lines(view.dispatch)
    else:
        lines.append("dispatch: no run")
    if (execution := view.execution) is not None:
        at = f" at {execution.current_state!r}" if execution.current_state else ""
        lines.append(f"execution: {execution.status}{at}")
        lines.append(f"  {execution.arn}")
    else:
        lines.append("execution: none")
    return "\n".join(lines)
