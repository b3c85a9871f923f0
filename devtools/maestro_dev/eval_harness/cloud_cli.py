"""Run a scenario on an environment's eval copy, with the operator's AWS credentials.

``python -m maestro_dev.eval_harness.cloud_cli evals/scenarios/leak-204.yaml --env dev [--mode all]
[--wait]``: finds ``maestro-<env>-eval`` by its outputs, records the run in its eval-runs table,
starts its eval executor and prints the run id and the execution's console URL; ``--wait``
follows the run to its end, prints each gate it pauses at (checkpoint mode) with the command
that releases it, and the run's rows as JSON (docs/evals-in-the-cloud.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from maestro.stack_outputs import (
    EVAL_STACK_SUFFIX,
    OUTPUT_EVAL_MACHINE,
    OUTPUT_EVAL_RUNS_TABLE,
    stack_for_env,
)
from maestro_dev.cloud import console_url
from maestro_dev.eval_harness.cloud import start_run
from maestro_dev.eval_harness.loader import load_scenario
from maestro_dev.eval_harness.runs import EvalRunStore

POLL_SECONDS = 10.0


def eval_copy_outputs(cloudformation: Any, env: str) -> tuple[str, str]:
    """The eval copy's executor ARN and eval-runs table, from its stack's outputs."""
    name = stack_for_env(env) + EVAL_STACK_SUFFIX
    try:
        described = cloudformation.describe_stacks(StackName=name)["Stacks"][0]
    except Exception as error:  # the SDK's "does not exist" is a ClientError among others
        raise LookupError(
            f'no stack {name}: deploy it (cdk.json: "eval_executor": true for {env})'
        ) from error
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
    missing = sorted({OUTPUT_EVAL_MACHINE, OUTPUT_EVAL_RUNS_TABLE} - set(outputs))
    if missing:
        raise LookupError(f"stack {name} has no output {missing}: not an eval copy?")
    return outputs[OUTPUT_EVAL_MACHINE], outputs[OUTPUT_EVAL_RUNS_TABLE]


def run(
    argv: list[str],
    out: TextIO,
    clients: Callable[[str], Any],
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    parser = argparse.ArgumentParser(prog="python -m maestro_dev.eval_harness.cloud_cli")
    parser.add_argument("scenario", type=Path, help="a scenario file (evals/scenarios/*.yaml)")
    parser.add_argument("--env", required=True, help="the environment whose eval copy runs it")
    parser.add_argument("--mode", choices=["all", "checkpoint"], default="all")
    parser.add_argument("--wait", action="store_true", help="follow the run to its end")
    args = parser.parse_args(argv)
    scenario = load_scenario(args.scenario)
    executor, table = eval_copy_outputs(clients("cloudformation"), args.env)
    ddb, sfn = clients("dynamodb"), clients("stepfunctions")
    run_id = f"{scenario.id}-{uuid.uuid4().hex[:8]}"
    arn = start_run(
        scenario,
        args.mode,
        ddb=ddb,
        sfn=sfn,
        eval_runs_table=table,
        executor_arn=executor,
        run_id=run_id,
        now=datetime.now(UTC),
    )
    print(f"run {run_id} on {args.env}'s eval copy: {console_url(arn)}", file=out)
    if not args.wait:
        return 0
    store = EvalRunStore(ddb, table)
    told: set[str] = set()
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        for gate in store.open_gates(run_id):
            key = f"{gate.index}#{gate.gate}"
            if key not in told:
                told.add(key)
                print(
                    f"paused at step {gate.index} ({gate.gate}): release with aws stepfunctions "
                    f"send-task-success --task-output '{{}}' --task-token {gate.token}",
                    file=out,
                )
        sleep(POLL_SECONDS)
    print(json.dumps(store.export(run_id), indent=2), file=out)
    return 0 if store.run(run_id).status == "passed" else 1


def main() -> int:
    from maestro.adapters.aws import client

    return run(sys.argv[1:], sys.stdout, lambda service: client(service))


if __name__ == "__main__":
    sys.exit(main())
