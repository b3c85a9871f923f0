"""``maestro eval run``: scenarios through the eval executor on the embedded stack."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from maestro_dev.eval_harness.loader import SCHEMA, ScenarioError, load_scenarios, scenario_schema
from maestro_dev.eval_harness.runner import (
    GateHandler,
    PausedGate,
    ScenarioResult,
    run_scenario,
    save_runs,
    summary,
)

DEFAULT_RUNS_DIR = Path(".maestro") / "eval-runs"
DEFAULT_PLOTS_DIR = Path("evals") / "reports"
DEFAULT_REPORT = Path(".maestro") / "eval-report.html"


class StopRequestedError(Exception):
    """The person at the prompt asked to stop."""


def prompt_gate(stdin: TextIO, prompts: TextIO) -> GateHandler:
    """A gate handler that waits for Enter (``q`` stops the run)."""

    def on_gate(gate: PausedGate) -> None:
        where = f"step {gate.step}" if gate.step is not None else gate.kind
        prompts.write(
            f"\n[{gate.scenario_id}] paused: {gate.gate} ({where}: {gate.detail})\n"
            "  Enter releases the gate, q stops > "
        )
        prompts.flush()
        answer = stdin.readline()
        if answer == "" or answer.strip().lower() in ("q", "quit"):
            raise StopRequestedError(f"stopped at {gate.gate} ({where})")

    return on_gate


def _render(result: ScenarioResult, out: TextIO) -> None:
    mark = "PASS" if result.passed else "FAIL"
    print(f"{mark} {result.id}: {result.title} ({result.wall_seconds:.1f} s)", file=out)
    if result.error:
        print(f"     error: {result.error}", file=out)
    for checkpoint in result.checkpoints:
        mark = "ok " if checkpoint.passed else "NOT"
        print(f"  {mark} {checkpoint.id}: {checkpoint.reason}", file=out)
        if checkpoint.known_failure:
            state = "still fails, as marked" if not checkpoint.passed else "PASSES: remove the mark"
            why = " ".join(checkpoint.known_failure.split())
            print(f"      known failure ({state}): {why}", file=out)
        if not checkpoint.passed:
            for finding in checkpoint.findings:
                if not finding.passed:
                    print(f"        - {finding.expectation}: {finding.reason}", file=out)
    if not result.passed:
        print(f"     written to catch: {' '.join(result.naive_failure.split())}", file=out)


@contextlib.contextmanager
def logs_to_stderr() -> Iterator[None]:
    """Every log handler writing to stdout writes to stderr meanwhile (Powertools' Logger writes
    its JSON lines to stdout, as Lambda wants): ``--json`` prints one object on stdout, whole."""
    moved: list[logging.StreamHandler] = []  # type: ignore[type-arg]
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    for logger in loggers:
        for handler in getattr(logger, "handlers", ()):
            if isinstance(handler, logging.StreamHandler) and handler.stream in (
                sys.stdout,
                sys.__stdout__,
            ):
                moved.append(handler)
    previous = [handler.setStream(sys.stderr) for handler in moved]
    try:
        yield
    finally:
        for handler, stream in zip(moved, previous, strict=True):
            handler.setStream(stream or sys.stdout)


def cmd_eval_run(args: argparse.Namespace, out: TextIO) -> int:
    logging.getLogger("moto").setLevel(logging.CRITICAL)  # its ASL interpreter logs every error
    if args.json:
        with logs_to_stderr():
            return _eval_run(args, out)
    return _eval_run(args, out)


def _eval_run(args: argparse.Namespace, out: TextIO) -> int:
    try:
        scenarios = load_scenarios(Path(args.path))
    except ScenarioError as error:
        print(f"maestro eval run: {error}", file=sys.stderr)
        return 2
    on_gate = None
    if args.mode != "all":
        on_gate = prompt_gate(sys.stdin, sys.stderr if args.json else out)
    results: list[ScenarioResult] = []
    try:
        for scenario in scenarios:
            result = run_scenario(scenario, args.mode, on_gate)
            results.append(result)
            if not args.json:
                _render(result, out)
    except StopRequestedError as stop:
        print(f"maestro eval run: {stop}", file=sys.stderr)
        return 130
    saved = save_runs(results, Path(args.save))
    report = summary(results)
    if args.json:
        json.dump(report, out)
        out.write("\n")
    else:
        passed = sum(r.passed for r in results)
        checkpoints = [c for r in results for c in r.checkpoints]
        print(
            f"\n{passed}/{len(results)} scenarios passed, "
            f"{sum(c.passed for c in checkpoints)}/{len(checkpoints)} checkpoints"
            + (
                f" ({known} a known failure as marked)"
                if (known := sum(bool(c.known_failure) and not c.passed for c in checkpoints))
                else ""
            )
            + "; "
            f"rows in {saved}",
            file=out,
        )
    return 0 if report["passed"] else 1


def cmd_eval_schema(args: argparse.Namespace, out: TextIO) -> int:
    text = schema_text()
    if args.write:
        SCHEMA.write_text(text)
        print(f"wrote {SCHEMA}", file=out)
    else:
        out.write(text)
    return 0


def schema_text() -> str:
    return json.dumps(scenario_schema(), indent=2, ensure_ascii=False) + "\n"


def cmd_eval_report(args: argparse.Namespace, out: TextIO) -> int:
    from maestro_dev.eval_harness.report import latest_runs_file, load_inputs, render

    runs = Path(args.runs) if args.runs else latest_runs_file(DEFAULT_RUNS_DIR)
    if runs is not None and not runs.is_file():
        print(f"maestro eval report: no such file {runs}", file=sys.stderr)
        return 2
    inputs = load_inputs(runs, Path(args.plots))
    target = Path(args.out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(inputs))
    print(
        f"wrote {target}: {len(inputs.results)} scenario run(s) from {runs or 'nothing'}, "
        f"{len(inputs.plots)} plot(s)",
        file=out,
    )
    return 0


def add_eval_parsers(evals: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    add_run_parser(evals)
    report = evals.add_parser(
        "report",
        help="an HTML report: checkpoint grid, the evidence behind each grade, shame, plots",
    )
    report.add_argument(
        "--runs", help=f"a saved run file (default: the latest in {DEFAULT_RUNS_DIR})"
    )
    report.add_argument(
        "--plots", default=str(DEFAULT_PLOTS_DIR), help=f"PNG plots to embed ({DEFAULT_PLOTS_DIR})"
    )
    report.add_argument("--out", default=str(DEFAULT_REPORT), help=f"({DEFAULT_REPORT})")
    report.set_defaults(handler=cmd_eval_report)
    schema = evals.add_parser(
        "schema", help="print the scenario JSON Schema (generated from the pydantic models)"
    )
    schema.add_argument("--write", action="store_true", help=f"write it to {SCHEMA.name}")
    schema.set_defaults(handler=cmd_eval_schema)


def add_run_parser(evals: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = evals.add_parser(
        "run",
        help="run scenarios through the eval executor on the embedded stack",
        description="Each scenario runs on a fresh embedded stack through "
        "statemachines/eval_executor.asl.json; exits 0 only if every checkpoint passes.",
    )
    run.add_argument("path", help="a scenario file or a directory of them (evals/scenarios)")
    run.add_argument(
        "--mode",
        choices=("all", "checkpoint", "step"),
        default="all",
        help="all: never pause; checkpoint: pause after each checkpoint; step: pause at every "
        "gate (before each step, after each checkpoint, and each package's own gates)",
    )
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument(
        "--save",
        default=str(DEFAULT_RUNS_DIR),
        help=f"where the runs' rows are written for `maestro eval report` ({DEFAULT_RUNS_DIR})",
    )
    run.set_defaults(handler=cmd_eval_run)
