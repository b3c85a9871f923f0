"""`maestro directory import` of a generated directory (5 properties, 2,000 tenants, 200
vendors, 20 PMs, on-call shifts) into a running `maestro serve`, then the same folder again.

Both are the commands an operator types, each a fresh process against a `maestro serve` started
as one too: the wall time includes reading and validating the CSV files, the one HTTP request
and the server's apply (BatchWriteItem on its moto DynamoDB). Acceptance (#18): the import in
under 60 s, and the re-import changes nothing ("0 changes").

Run: .venv/bin/python benchmarks/bench_directory.py   (make bench runs it)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import merge_results

from maestro_dev.directory.files import write_folder
from maestro_dev.directory.synthetic import synthetic_directory

BUDGET_SECONDS = 60.0
PROPERTIES, TENANTS, VENDORS, PMS = 5, 2000, 200, 20


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _maestro(*argv: str, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "maestro_dev.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return time.perf_counter() - started, done


def main() -> int:
    directory = synthetic_directory(
        properties=PROPERTIES, tenants=TENANTS, vendors=VENDORS, pms=PMS
    )
    with tempfile.TemporaryDirectory() as home:
        folder = Path(home) / "pms-export"
        write_folder(directory, folder)
        port = _free_port()
        env = {**os.environ, "HOME": home}  # serve writes its operator token under HOME
        serve = subprocess.Popen(
            [sys.executable, "-m", "maestro_dev.cli", "serve", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            token = Path(home) / ".maestro" / f"serve-{port}.token"
            deadline = time.monotonic() + 120
            while not token.exists():
                if serve.poll() is not None or time.monotonic() > deadline:
                    print("maestro serve did not start", file=sys.stderr)
                    return 1
                time.sleep(0.2)
            url = f"http://127.0.0.1:{port}"
            first_s, first = _maestro("directory", "import", str(folder), "--url", url, env=env)
            again_s, again = _maestro("directory", "import", str(folder), "--url", url, env=env)
        finally:
            serve.terminate()
            serve.wait(timeout=60)
    first_summary = first.stdout.strip().splitlines()[-1] if first.stdout.strip() else first.stderr
    again_summary = again.stdout.strip().splitlines()[-1] if again.stdout.strip() else again.stderr
    no_op = again.returncode == 0 and again_summary.startswith("0 changes")
    ok = first.returncode == 0 and first_s < BUDGET_SECONDS and no_op
    print(
        f"directory import ({PROPERTIES} properties, {TENANTS} tenants, {VENDORS} vendors, "
        f"{PMS} PMs, {len(directory.on_call)} shifts) into "
        f"maestro serve: {first_s:.1f} s (budget {BUDGET_SECONDS:.0f} s)\n  {first_summary}\n"
        f"re-import: {again_s:.1f} s\n  {again_summary}"
    )
    merge_results(
        {
            "directory_import_s": round(first_s, 2),
            "directory_reimport_s": round(again_s, 2),
            "directory_reimport_changes": 0 if no_op else again_summary,
            "directory_import_size": {
                "properties": PROPERTIES,
                "tenants": TENANTS,
                "vendors": VENDORS,
                "pms": PMS,
                "on_call_shifts": len(directory.on_call),
            },
            "directory_import_budget_s": BUDGET_SECONDS,
        }
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
