"""The fault matrix (#11): every fault × stage cell on the embedded stack, printed as a table (a
row per fault, a column per stage, a code per outcome, the legend below) and written to
bench/results.json under ``fault_matrix``. Exits 1 if any cell lost a message, duplicated an
effect or left a package without a recorded decision.

Run: .venv/bin/python benchmarks/fault_matrix.py   (make faults; make bench runs it too)
"""

from __future__ import annotations

import logging
import sys
import time
from collections import defaultdict

from _results import merge_results

from maestro.observability import logger
from maestro_dev.local.fault_matrix import CELLS, FAULTS, STAGES, CellResult, Matrix, render


def repository_calls(matrix: Matrix) -> dict[str, list[str]]:
    """Each stage's DynamoDB calls (operation and tables), as the wire saw them."""
    seen: dict[str, set[str]] = defaultdict(set)
    for stage, service, operation, targets in matrix.wire.calls:
        if service == "dynamodb" and stage is not None:
            seen[stage].add(f"{operation} {'+'.join(targets)}")
    return {stage: sorted(calls) for stage, calls in sorted(seen.items())}


def faulted_calls(matrix: Matrix) -> dict[str, set[str]]:
    faulted: dict[str, set[str]] = defaultdict(set)
    for call, _code in matrix.wire.injected():
        if call.service == "dynamodb" and call.stage is not None:
            faulted[call.stage].add(f"{call.operation} {'+'.join(call.targets)}")
    return faulted


def main() -> int:
    logging.getLogger("moto").setLevel(logging.CRITICAL)  # its own words on the injected errors
    started, cpu = time.perf_counter(), time.process_time()
    results: list[CellResult] = []
    with Matrix() as matrix:
        logger.setLevel("CRITICAL")  # failing open is what many cells are for
        for cell in CELLS:
            results.append(matrix.run(cell))
            print(".", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        calls = repository_calls(matrix)
        faulted = faulted_calls(matrix)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu

    table = render(results)
    print(table)
    print()
    unfaulted = [
        f"{stage}: {call}"
        for stage, made in calls.items()
        for call in made
        if call not in faulted[stage]
    ]
    total = sum(len(cs) for cs in calls.values())
    print(
        f"{len(results)} runs, {sum(len(r.outcomes) for r in results)} cells, "
        f"{total - len(unfaulted)} of {total} repository calls (stage, operation, table) "
        f"faulted; {seconds:.0f} s wall, {cpu_seconds:.0f} s CPU in this process"
    )
    for call in unfaulted:
        print(f"  never faulted: {call}")
    violations = [f"{r.cell.id}: {v}" for r in results for v in r.violations]
    for violation in violations:
        print(f"  VIOLATION {violation}")
    if violations:
        print(f"{len(violations)} violation(s): lost, duplicated or undecided")
    else:
        print("No cell lost a message, duplicated an effect or left a package undecided.")

    cells: dict[str, dict[str, str]] = defaultdict(dict)
    for result in results:
        cells[result.cell.fault].update(result.outcomes)
    merge_results(
        {
            "fault_matrix": {
                "stages": list(STAGES),
                "faults": FAULTS,
                "cells": dict(cells),
                "table": table,
                "runs": len(results),
                "violations": violations,
                "repository_calls": calls,
                "repository_calls_never_faulted": unfaulted,
                "seconds": round(seconds, 1),
                "cpu_seconds": round(cpu_seconds, 1),
            }
        }
    )
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
