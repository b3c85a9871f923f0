#!/usr/bin/env python3
"""The CDK app: one stack per environment of cdk.json it is asked for, and its eval copy
(``maestro-<env>-eval``, docs/evals-in-the-cloud.md) where the environment sets ``eval_executor``.

``-c env=NAME`` (the ``cdk`` CLI) or ``python app.py --env NAME`` picks the environments
(``NAME,NAME`` for several); without either, the development ones (``"development": true``:
dev). An environment that would alarm or page no one is refused: the app exits 1 and says
which key of which environment to set (``infra.config``).

The account and region come from the CDK's environment variables (``CDK_DEFAULT_ACCOUNT``,
``CDK_DEFAULT_REGION``, set by the ``cdk`` CLI from your profile); without them the stacks are
environment-agnostic. Synthesis makes no AWS call. ``python app.py`` writes one template per
environment into ``cdk.out`` (or ``$CDK_OUTDIR``) and prints each environment's synth time and
the layers' sizes (when they were bundled).

The eval copy's executor is dev tooling, which the deploy code (``infra``) never imports: this
app hands it in (:func:`eval_copy_code`), the package as a folder and its handlers by name.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.config import environments, stack_name
from infra.evals import EvalCopyCode
from infra.report import layer_sizes
from infra.stack import MaestroStack
from maestro.stack_outputs import EVAL_STACK_SUFFIX

ROOT = Path(__file__).resolve().parent


def app_context(env: str | None = None) -> dict[str, object]:
    """cdk.json's context, and ``env`` when given (the ``cdk`` CLI passes its context too, and
    its ``-c`` values win)."""
    context: dict[str, object] = json.loads((ROOT / "cdk.json").read_text())["context"]
    if env is not None:
        context["env"] = env
    # Layers and functions record their asset paths, so the report below can size them.
    return {**context, "aws:cdk:enable-asset-metadata": True}


def eval_copy_code() -> EvalCopyCode:
    """The eval executor's code and rules (``maestro_dev.eval_harness``), for the eval copy."""
    import maestro_dev
    from maestro_dev.eval_harness import cloud
    from maestro_dev.eval_harness.executor import HANDLERS
    from maestro_dev.eval_harness.runs import EVAL_RUNS
    from maestro_dev.local.numbers import ON_CALL_PM
    from maestro_dev.local.twilio_loopback import LOCAL_ACCOUNT_SID

    return EvalCopyCode(
        package=Path(maestro_dev.__file__).resolve().parent,
        handlers_module=cloud.__name__,
        steps=HANDLERS,
        step_tables=cloud.STEP_TABLES,
        sends_webhooks=cloud.SENDS_WEBHOOKS,
        reads_executions=cloud.READS_EXECUTIONS,
        lets_time_pass=cloud.LETS_TIME_PASS,
        waits_for_the_watcher=cloud.WAITS_FOR_THE_WATCHER,
        real_time_budget_seconds=cloud.DEFAULT_BUDGET_SECONDS,
        settings_model=cloud.EvalSettings,
        runs_table=EVAL_RUNS,
        on_call_pm=ON_CALL_PM,
        webhook_account=LOCAL_ACCOUNT_SID,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", help="NAME[,NAME…] of cdk.json (default: the development ones)")
    args = parser.parse_args(argv)
    app = cdk.App(
        context=app_context(args.env), outdir=os.environ.get("CDK_OUTDIR", str(ROOT / "cdk.out"))
    )
    env = cdk.Environment(
        account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")
    )
    try:
        configs = environments(app)
    except ValueError as error:  # a setting that is wrong, or that would reach no one
        print(f"maestro: {error}", file=sys.stderr)
        return 1
    cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
    timings: list[tuple[str, float]] = []
    stacks = []
    for config in configs:
        started = time.perf_counter()
        stacks.append(MaestroStack(app, stack_name(config.name), config=config, env=env))
        timings.append((config.name, time.perf_counter() - started))
        if config.eval_executor:  # its eval copy beside it (infra/evals.py)
            started = time.perf_counter()
            name = stack_name(config.name) + EVAL_STACK_SUFFIX
            stacks.append(
                MaestroStack(app, name, config=config, eval_copy=eval_copy_code(), env=env)
            )
            timings.append((config.name + EVAL_STACK_SUFFIX, time.perf_counter() - started))
    started = time.perf_counter()
    assembly = app.synth()
    total = time.perf_counter() - started
    for name, seconds in timings:
        print(f"maestro: {stack_name(name)} constructed in {seconds:.1f} s", file=sys.stderr)
    print(
        f"maestro: {len(stacks)} template(s) synthesized (and checked by cdk-nag) in {total:.1f} s"
        f" into {assembly.directory}",
        file=sys.stderr,
    )
    for stack in stacks:
        for layer, size in layer_sizes(assembly, stack.artifact_id).items():
            print(f"maestro: {stack.stack_name} layer {layer}: {size}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
