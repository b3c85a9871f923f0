"""What each function may touch: its tables (read, or read and write) and the event bus.

One table, read by three parties, so they cannot drift apart:

- the runtime: a pipeline step's settings (``MAESTRO_STEP``) must name exactly the tables of its
  row, and a call to a table it does not name fails before it leaves the process
  (:func:`maestro.adapters.ddb.refuse_unconfigured_tables`);
- the CDK stack (``infra/stack.py``): each function's table settings and IAM grants are made
  from its row, nothing else;
- the tests: ``tests/infra`` compares every role's policy with the rows (an extra grant
  fails), and ``tests/integration/test_least_privilege.py`` plays scenarios on the embedded
  stack and checks every DynamoDB call each stage made against its row.

``read`` grants :data:`READ_ACTIONS`; ``write`` grants those and :data:`WRITE_ACTIONS` (a
conditional put is a write, and a transaction's items need their own actions). A function
that is not a pipeline step has its own settings model; its row lists exactly the table
settings that model has. Adding a function (or a table to a step): add its row here, then its
handler and its ``FunctionSpec`` in the stack; the tests say what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

__all__ = [
    "BUS_PLACEHOLDER",
    "DISPATCH_STEPS",
    "EVENT_PUBLISHERS",
    "FUNCTION_TABLES",
    "PIPELINE_STEPS",
    "READ_ACTIONS",
    "STATE_MACHINES",
    "WRITE_ACTIONS",
    "Access",
    "asl_substitutions",
    "placeholder",
    "tables_of",
]

Access = Literal["read", "write"]
READ_ACTIONS = frozenset(
    {
        "dynamodb:BatchGetItem",
        "dynamodb:ConditionCheckItem",
        "dynamodb:DescribeTable",
        "dynamodb:GetItem",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:Query",
        "dynamodb:Scan",
    }
)
"""What ``read`` grants on a table and its indexes (the CDK's ``grant_read_data``)."""
WRITE_ACTIONS = frozenset(
    {"dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}
)
"""What ``write`` grants besides (the CDK's ``grant_read_write_data``)."""

PIPELINE_STEPS = (
    "precheck",
    "escalate",
    "lease",
    "resolve",
    "brain",
    "dispose",
    "act",
    "persist",
    "fail_open",
    "step_gate",
)
"""The package pipeline's steps, one function each (``maestro.pipeline.entry.STEPS``)."""

DISPATCH_STEPS = ("wo_gather", "wo_ask", "wo_record", "wo_judge", "wo_assign", "wo_page")
"""The work order machine's steps (gather → judge → dispatch → persist, docs/dispatch.md), one
function each (``maestro.dispatch.entry``)."""

STATE_MACHINES: dict[str, tuple[str, tuple[str, ...]]] = {
    "package_pipeline": ("package_pipeline.asl.json", PIPELINE_STEPS),
    "work_order": ("work_order.asl.json", DISPATCH_STEPS),
}
"""Each state machine: its ASL file (``statemachines/``) and the functions its Task states
invoke, each by the placeholder :func:`placeholder` names. The one list the runtime, the
embedded stack, the fault matrix and the CDK stack read."""


def placeholder(step: str) -> str:
    """The ASL's ``${...}`` for a step's function ARN: ``wo_gather`` → ``WoGatherFunctionArn``."""
    return "".join(part.capitalize() for part in step.split("_")) + "FunctionArn"


BUS_PLACEHOLDER = "EventBusName"
"""The ASL's ``${...}`` for the event bus's name, in a machine whose ASL puts events itself
(the package pipeline's ``decision.recorded``)."""


def asl_substitutions(
    steps: Iterable[str], function_arn: Callable[[str], str], bus_name: str | None = None
) -> dict[str, str]:
    """Every ``${Placeholder}`` of a machine's ASL → its value: each step's function ARN by
    :func:`placeholder`, and the bus's name where the machine puts events. The cloud (``infra``)
    and the embedded stack substitute with this one map; a unit test holds it to the ASL files."""
    substitutions = {placeholder(step): function_arn(step) for step in steps}
    if bus_name is not None:
        substitutions[BUS_PLACEHOLDER] = bus_name
    return substitutions


FUNCTION_TABLES: dict[str, dict[str, Access]] = {
    # -- the package pipeline's steps ---------------------------------------------------------
    # Every step reads its package back from the buffer when it travels by reference, and
    # every step after the lease renews it: conversations is written by all of them.
    # The package; the cheap model's budget (and the account's daily count); whether the sender
    # is in the directory (a number nobody knows costs no model call: the floor alone).
    "precheck": {"conversations": "write", "parties": "read"},
    "escalate": {
        # The early escalation: the sender and their open contexts, the decisions written
        # ahead, then act's lanes in-process (the page, the safety advice, an unknown number's
        # fold window, digest line and the daily caps in conversations), behind act's
        # idempotency records; who is on call (the directory, read only).
        "conversations": "write",
        "parties": "read",
        "directory": "read",
        "work_orders": "read",
        "pending": "read",
        "state": "read",
        "decisions": "write",
        "messages": "write",
        "sends": "write",
        "idempotency": "write",
    },
    "lease": {
        # Takes the lease; snapshots the sender, their open WOs (with state), open items, the
        # conversation's recent decisions (the guard trail) and the WO executions' waits for
        # the sender (dispatch: an open offer or approval is answered first).
        "conversations": "write",
        "parties": "read",
        "work_orders": "read",
        "pending": "read",
        "state": "read",
        "decisions": "read",
        "dispatch": "read",
    },
    # The WOs a question or hold names, and whether an emergency interrupted them.
    "resolve": {"conversations": "write", "work_orders": "read", "state": "read"},
    # The memory window: recent messages (conversations) and recent decisions.
    "brain": {"conversations": "write", "decisions": "read"},
    # Writes every decision ahead; moves the pending items the package closes.
    "dispose": {"conversations": "write", "decisions": "write", "pending": "write"},
    "act": {
        # One lane: WOs and their timelines, questions and holds, the vendor's and the PM's
        # numbers (read only: the directory is imported, never written by a step), the texts
        # (sends claims them, messages records them), the outcome in the decision log (and the
        # package's earlier outcomes, read for a composed reply), the idempotency record, and
        # in conversations an unknown number's fold window and digest line, the daily caps'
        # counts and the model budget; who is on call (the directory);
        # a WO execution's wait re-read before its token is sent (dispatch, read only: the
        # execution's own steps write the run), an answer to an offer or approval, a WO closed
        # or a tenant's details (maestro.lanes.dispatch_waits).
        "conversations": "write",
        "parties": "read",
        "directory": "read",
        "work_orders": "write",
        "timeline": "write",
        "pending": "write",
        "decisions": "write",
        "messages": "write",
        "sends": "write",
        "idempotency": "write",
        "dispatch": "read",
    },
    # The completion line; WO-keyed state snapshots (a created WO read once); the lease freed.
    "persist": {
        "conversations": "write",
        "decisions": "write",
        "state": "write",
        "work_orders": "read",
    },
    # The fallback decision and completion line, the PM's page (and an emergency's safety
    # advice) to whoever is on call (the directory, read only), the lease released or the turn
    # forfeited; whether the directory lets the sender be texted (parties).
    "fail_open": {
        "conversations": "write",
        "directory": "read",
        "parties": "read",
        "decisions": "write",
        "messages": "write",
        "sends": "write",
    },
    # Renews the lease for the gate's wait; stores the task token.
    "step_gate": {"conversations": "write", "gates": "write"},
    # -- the work order machine's steps (docs/dispatch.md) -------------------------------------
    # Each reads the WO and writes its dispatch run (versioned). Those that text (the question,
    # the approval, an offer, the access details, a withdrawal, the PM's page) have the
    # messenger's tables: sends claims, messages records, conversations holds the consent and
    # the daily caps, parties says whether the directory lets a number be texted.
    "wo_gather": {
        # What the job lacks: the WO and its timeline (notes, media); creates the run.
        "dispatch": "write",
        "work_orders": "read",
        "timeline": "read",
    },
    "wo_ask": {
        # Stores the task token, texts the question (tenant), approval (PM) or offer (vendor);
        # re-reads the WO first (I6); marks the WO awaiting the tenant's answer (state).
        "dispatch": "write",
        "work_orders": "read",
        "state": "write",
        "directory": "read",
        "parties": "read",
        "conversations": "write",
        "messages": "write",
        "sends": "write",
    },
    "wo_record": {
        # A wait's outcome on the run (answered, declined, timed out, withdrawn); a withdrawn
        # offer's text to its vendor; the WO's awaited answer cleared (state).
        "dispatch": "write",
        "work_orders": "read",
        "state": "write",
        "directory": "read",
        "parties": "read",
        "conversations": "write",
        "messages": "write",
        "sends": "write",
    },
    # Priority (the WO, and its state's trail: an emergency escalated on it), trade (its
    # category, else its timeline's notes), budget, approval and the ranked vendors (the
    # directory; open jobs from the property's open WOs), recorded with the reasons on the run.
    "wo_judge": {
        "dispatch": "write",
        "work_orders": "read",
        "timeline": "read",
        "state": "read",
        "directory": "read",
    },
    "wo_assign": {
        # The WO gets its vendor (assigned), its timeline the entry; the vendor the access
        # details, the tenant who is coming.
        "dispatch": "write",
        "work_orders": "write",
        "timeline": "write",
        "directory": "read",
        "parties": "read",
        "conversations": "write",
        "messages": "write",
        "sends": "write",
    },
    "wo_page": {
        # No vendor (or no approval): the on-call PM paged with the trail (the run and the
        # WO's timeline).
        "dispatch": "write",
        "work_orders": "read",
        "timeline": "read",
        "directory": "read",
        "parties": "read",
        "conversations": "write",
        "messages": "write",
        "sends": "write",
    },
    # -- the functions around it -------------------------------------------------------------
    # Starts a WO's execution (named by its id) from its wo.created event: no table.
    "wo_start": {},
    # Webhooks: dedupe and buffer (messages, conversations), bind the sender (parties), record
    # Twilio's delivery statuses (messages).
    "inbound_sms": {"messages": "write", "conversations": "write", "parties": "read"},
    # The fallback drain: the same route for the webhooks Twilio's fallback URL kept.
    "inbound_fallback": {"messages": "write", "conversations": "write", "parties": "read"},
    # Flushes packages (conversations); the urgent idle window reads the sender's open WOs and
    # their state (urgency in memory). It calls no model (the prober probes).
    "flusher": {"conversations": "write", "work_orders": "read", "state": "read"},
    # The severity probe off the flusher's path: claims and stores its answer on the message
    # (messages, and its buffered copy in conversations, with the model budgets), with the
    # sender (parties) and their open WOs (work_orders) as context.
    "prober": {
        "messages": "write",
        "conversations": "write",
        "parties": "read",
        "work_orders": "read",
    },
    # Read-verify: reads every claimed surface (a dispatch run's too), writes only the ledger.
    "watcher": {
        "ledger": "write",
        "messages": "read",
        "work_orders": "read",
        "timeline": "read",
        "pending": "read",
        "decisions": "read",
        "dispatch": "read",
    },
    "sweeper": {"decisions": "read", "ledger": "write"},
    # The hourly digest: the hour's lines and its closing (conversations), its one page to the
    # PM on call (the directory, read only; sends claims it, messages records it), the
    # account's daily page count (conversations).
    "digest": {
        "conversations": "write",
        "messages": "write",
        "sends": "write",
        "directory": "read",
    },
}
"""Function (``functions/<name>``) → logical table name (``maestro.tables``) → its access."""

EVENT_PUBLISHERS: frozenset[str] = frozenset(
    {"escalate", "act", "fail_open", "digest", *DISPATCH_STEPS}
)
"""The functions that put domain events on the bus themselves (persist's ``decision.recorded``
is put by the state machine's own EventBridge integration, not by a function): three pipeline
steps, the digest (its page's ``message.sent`` and ``escalation.paged``) and the work order
machine's steps (the ``wo.*`` events of docs/dispatch.md and their texts' ``message.sent``)."""


_unlisted = sorted(set(PIPELINE_STEPS + DISPATCH_STEPS) - set(FUNCTION_TABLES))
if _unlisted:  # a step without a row would be granted nothing and fail on its first call
    raise ValueError(f"maestro.access.FUNCTION_TABLES has no row for the steps {_unlisted}")


def tables_of(function: str) -> dict[str, Access]:
    """The row of ``function``; a name without one is an error, never an empty grant."""
    if function not in FUNCTION_TABLES:
        raise KeyError(f"maestro.access.FUNCTION_TABLES has no row for {function!r}")
    return FUNCTION_TABLES[function]
