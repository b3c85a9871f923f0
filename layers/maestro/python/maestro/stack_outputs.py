"""A deployed stack's face: its name and the outputs the operators' commands read by name.

The CDK app (``infra``) declares them; the dev tooling (``maestro executions|step|ledger
--stack``, ``maestro eval cloud``, ``maestro twilio``) finds them by these names. Neither imports
the other, so the names live here, below both. No function of the runtime reads them.
"""

from __future__ import annotations

STACK_PREFIX = "maestro-"
EVAL_STACK_SUFFIX = "-eval"  # maestro-<env>-eval: the environment's eval copy
OUTPUT_STATE_MACHINE = "StateMachineArn"
OUTPUT_WORK_ORDER_MACHINE = "WorkOrderStateMachineArn"
"""Optional: `maestro wo show` finds a WO's execution by name with it before the run names it."""
OUTPUT_GATES_TABLE = "GatesTableName"
OUTPUT_LEDGER_TABLE = "LedgerTableName"
OUTPUT_DIRECTORY_TABLE = "DirectoryTableName"
OUTPUT_PARTIES_TABLE = "PartiesTableName"
OUTPUT_SMS_URL = "TwilioSmsWebhookUrl"
OUTPUT_SMS_FALLBACK_URL = "TwilioSmsFallbackUrl"
OUTPUT_WEBHOOK_BASE_URL = "WebhookBaseUrl"
OUTPUT_AUTH_TOKEN_SECRET = "TwilioAuthTokenSecretArn"
OUTPUT_EVAL_MACHINE = "EvalExecutorStateMachineArn"
OUTPUT_EVAL_RUNS_TABLE = "EvalRunsTableName"


def table_output(logical_name: str) -> str:
    """``GatesTableName`` for ``gates``: the operators' commands read these by name."""
    return "".join(p.title() for p in logical_name.split("_")) + "TableName"


def stack_for_env(env: str) -> str:
    """``maestro-<env>``: the name `maestro executions --env <env>` looks for."""
    return STACK_PREFIX + env
