"""`maestro demo`'s cost in one run: wall time, and Step Functions state transitions per package.

Run: .venv/bin/python benchmarks/bench_demo.py   (make bench runs it)
"""

from __future__ import annotations

import subprocess
import sys
import time

from _results import merge_results

from maestro_dev.local.stack_demo import run_demo

WALL_BUDGET_SECONDS = 10.0


def main() -> int:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "maestro_dev.cli", "demo", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    process_seconds = time.perf_counter() - started
    report = run_demo()
    single_action = [p for p in report.packages if len(p.actions) == 1]
    ratio = report.wall_seconds / WALL_BUDGET_SECONDS
    print(
        f"maestro demo: {len(report.packages)} packages, demo wall {report.wall_seconds:.2f} s "
        f"in-process, {process_seconds:.2f} s as a fresh process "
        f"(budget {WALL_BUDGET_SECONDS:.0f} s: ratio {ratio:.2f})"
    )
    for p in report.packages:
        print(
            f"  {p.package_id}  route {p.route:<9}  {len(p.actions)} action(s)  "
            f"{p.transitions} states entered"
        )
    reasoning = [p.transitions for p in single_action if p.route == "reasoning"]
    if reasoning:
        print(f"state transitions per single-action package (reasoning route): {reasoning[0]}")
    merge_results(
        {
            "demo": {
                "packages": len(report.packages),
                "wall_seconds_in_process": round(report.wall_seconds, 2),
                "wall_seconds_fresh_process": round(process_seconds, 2),
                "budget_seconds": WALL_BUDGET_SECONDS,
                "states_entered_per_package": {
                    p.package_id: p.transitions for p in report.packages
                },
                "evidence": report.evidence,
                "shame": report.shame,
            }
        }
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
