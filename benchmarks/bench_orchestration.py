"""Cost per package on the embedded stack, and whether it grows with the packages done.

N packages go one after another through one embedded stack (moto running the real ASL,
DynamoDB, SQS, EventBridge): each is one text through the signed webhook, then the idle window
passed in virtual time, so the flusher starts its execution; a package's time is the wall clock
from the webhook to its execution's end. The packages come in blocks of 50 (10 new tenants,
each texting the same 5 things in turn: a leak, a follow-up, a second problem, a visit time, a
thanks), so every block asks the same work of maestro and a later block costs more only if the
stack itself grows. Each run is a fresh interpreter (a child process of this script) that first
warms up on a throwaway stack of a few packages, so imports and first calls are paid before
anything is measured.

The largest N runs once; each smaller N runs alongside it, in a second process, on a fresh stack
after fresh stack until the large run ends (the runs that ended before it are kept). So both
figures are taken over the same minutes: on a machine shared with other work, the speed of the
moment moves a package's time by more than the growth being looked for (a 50-package run
measured a few minutes apart ranged from 180 to 305 ms median here).

Merges into bench/results.json (and regenerates bench/results.md):

- ``orchestration_ms``: ``{"50": {"median": ms, "p95": ms}, "500": {...}}``: every package of
  the runs of N packages through one stack (``orchestration_runs``: how many runs of each N);
- ``orchestration_tail_ms``: the same for the last 50 packages of the largest run alone (what a
  package costs once the stack has done the rest);
- ``orchestration_cpu_ms``: the process CPU per package (all threads), median over the first and
  over the last 50 packages of the largest run;
- ``rss_mb``: ``{"start": mb, "after_500": mb}``: the process's resident memory once the stack
  is up and seeded, and after the largest run's packages (``/proc/self/status``);
- ``orchestration_limits``: the acceptance figures (p95 at 500 at most 1.15x p95 at 50; RSS
  growth under 150 MB); exits 1 when one is missed.

Run: .venv/bin/python benchmarks/bench_orchestration.py [--sizes 50 500]   (make bench runs it)
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _results import merge_results

REPO = Path(__file__).resolve().parents[1]
BLOCK_SENDERS = 10
SCRIPT = (
    "the kitchen sink is leaking",
    "any update?",
    "the bedroom outlet doesn't work",
    "tomorrow morning works",
    "thanks!",
)
BLOCK = BLOCK_SENDERS * len(SCRIPT)
WARM_UP_PACKAGES = 5
TAIL = 50
P95_RATIO_LIMIT = 1.15
RSS_GROWTH_LIMIT_MB = 150.0


def rss_mb() -> float:
    """This process's resident set size now (not its peak), from /proc/self/status."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmRSS in /proc/self/status (this benchmark needs Linux)")


def _sender(stack: Any, block: int, n: int) -> str:
    """The phone of tenant ``n`` of block ``block``, imported into the directory on first use."""
    from maestro.domain.directory import Person, PersonRole
    from maestro_dev.local.world import housed, seed_directory

    phone = f"+1415{block:04d}{n:03d}"
    if stack.parties.by_phone(phone) is None:
        tenant = Person(
            person_id=f"bench-{block:04d}-{n:03d}",
            role=PersonRole.TENANT,
            name=f"Tenant {block}.{n}",
            phones=(phone,),
            unit_id=f"{n % 9 + 1}{'ABCD'[n % 4]}",
        )
        seed_directory(stack, housed(tenant))
    return phone


def _packages(stack: Any, count: int, tag: str) -> list[tuple[float, float]]:
    """``count`` one-message packages through ``stack``; (wall ms, CPU ms) of each."""
    from maestro_dev.local.events import signed_sms_event, twilio_sid

    costs = []
    for n in range(count):
        block, at = divmod(n, BLOCK)
        turn, who = divmod(at, BLOCK_SENDERS)
        phone = _sender(stack, block, who)
        sid = twilio_sid("SM", f"{tag} {n}")
        wall, cpu = time.perf_counter(), time.process_time()
        response = stack.http(signed_sms_event(stack.twilio_token, sid, phone, SCRIPT[turn]))
        stack.advance(stack.idle + 1)
        costs.append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))
        if response["statusCode"] != 200 or stack.running_executions():
            raise RuntimeError(f"package {n} did not finish: {response['statusCode']}")
    return costs


def _warm_up() -> None:
    """A throwaway stack of a few packages: imports and first calls, never measured."""
    from maestro_dev.local.stack import LocalStack
    from maestro_dev.local.world import seed

    with LocalStack() as stack:
        seed(stack)
        _packages(stack, WARM_UP_PACKAGES, "warm")
    gc.collect()


def run_child(count: int, warm_up: bool = True) -> dict[str, Any]:
    """In a fresh interpreter: warm up, then ``count`` packages through one stack."""
    from maestro_dev.local.stack import LocalStack
    from maestro_dev.local.world import seed

    if warm_up:
        _warm_up()
    with LocalStack() as stack:
        seed(stack)
        start = rss_mb()
        started = time.perf_counter()
        costs = _packages(stack, count, "run")
        wall_s = time.perf_counter() - started
        gc.collect()
        after = rss_mb()
        statuses: dict[str, int] = {}
        for execution in stack.executions():
            statuses[execution["status"]] = statuses.get(execution["status"], 0) + 1
    return {
        "count": count,
        "wall_ms": [round(w, 2) for w, _ in costs],
        "cpu_ms": [round(c, 2) for _, c in costs],
        "rss_start_mb": start,
        "rss_after_mb": after,
        "wall_seconds": round(wall_s, 1),
        "statuses": statuses,
        "ended_at": time.time(),
    }


def run_repeated(count: int, stop_file: Path) -> dict[str, Any]:
    """In a fresh interpreter: warm up, then runs of ``count`` packages, each through a fresh
    stack, until ``stop_file`` exists (checked before each run)."""
    _warm_up()
    runs = []
    while not stop_file.exists():
        runs.append(run_child(count, warm_up=False))
        gc.collect()
    return {"count": count, "runs": runs}


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 1), "p95": round(_p95(values), 1)}


def _child(log: Path, *args: str) -> subprocess.Popen[str]:
    # stderr goes to a file, not a pipe: a pipe is read only when its child is waited for, so
    # a repeating child that logs 64 KB before the long run ends would block in its write,
    # and its executions with it (a package stalled writing a log line).
    with log.open("w") as stderr:
        return subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )


def _result(child: subprocess.Popen[str], log: Path, what: str) -> dict[str, Any]:
    out, _ = child.communicate()
    if child.returncode != 0:
        raise RuntimeError(f"the {what} failed:\n{log.read_text()[-20_000:]}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def measure(sizes: list[int]) -> dict[int, dict[str, Any]]:
    """Per size: ``wall_ms`` and ``cpu_ms`` of every package measured, ``runs``, and for the
    largest its RSS and statuses. The smaller sizes repeat alongside the largest (see above)."""
    largest, smaller = sizes[-1], sizes[:-1]
    with tempfile.TemporaryDirectory() as tmp:
        stop = Path(tmp) / "stop"
        logs = {n: Path(tmp) / f"stderr-{n}.log" for n in sizes}
        long_run = _child(logs[largest], "--child", str(largest))
        repeating = {
            n: _child(logs[n], "--repeat", str(n), "--stop-file", str(stop)) for n in smaller
        }
        try:
            big = _result(long_run, logs[largest], f"run of {largest} packages")
        finally:
            stop.touch()
            done = {
                n: _result(child, logs[n], f"runs of {n} packages")
                for n, child in repeating.items()
            }
    measured = {largest: {**big, "runs": 1}}
    for n, result in done.items():
        measured[n] = pool(result["runs"], until=big["ended_at"])
    return dict(sorted(measured.items()))


def pool(runs: list[dict[str, Any]], until: float) -> dict[str, Any]:
    """The runs that ended by ``until`` (at least the first), as one: every package's times,
    how many runs, their seconds and their executions' statuses."""
    kept = [run for run in runs if run["ended_at"] <= until] or runs[:1]
    if not kept:
        raise RuntimeError("no run finished")
    statuses: dict[str, int] = {}
    for run in kept:
        for status, count in run["statuses"].items():
            statuses[status] = statuses.get(status, 0) + count
    return {
        "wall_ms": [ms for run in kept for ms in run["wall_ms"]],
        "cpu_ms": [ms for run in kept for ms in run["cpu_ms"]],
        "runs": len(kept),
        "wall_seconds": round(sum(run["wall_seconds"] for run in kept), 1),
        "statuses": statuses,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stop-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--no-write", action="store_true", help="print the figures without recording them"
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(args.child)))
        return 0
    if args.repeat:
        print(json.dumps(run_repeated(args.repeat, args.stop_file)))
        return 0

    sizes = sorted(set(args.sizes))
    runs = measure(sizes)
    largest = runs[sizes[-1]]
    orchestration = {str(n): _summary(run["wall_ms"]) for n, run in runs.items()}
    tail = _summary(largest["wall_ms"][-TAIL:])
    cpu = {
        "first_50": round(statistics.median(largest["cpu_ms"][:TAIL]), 1),
        "last_50": round(statistics.median(largest["cpu_ms"][-TAIL:]), 1),
    }
    rss = {"start": largest["rss_start_mb"], f"after_{sizes[-1]}": largest["rss_after_mb"]}
    growth = round(largest["rss_after_mb"] - largest["rss_start_mb"], 1)
    ratio = round(orchestration[str(sizes[-1])]["p95"] / orchestration[str(sizes[0])]["p95"], 3)
    limits = {
        "p95_ratio": ratio,
        "p95_ratio_limit": P95_RATIO_LIMIT,
        "rss_growth_mb": growth,
        "rss_growth_limit_mb": RSS_GROWTH_LIMIT_MB,
    }
    if not args.no_write:
        merge_results(
            {
                "orchestration_ms": orchestration,
                "orchestration_runs": {str(n): run["runs"] for n, run in runs.items()},
                "orchestration_tail_ms": tail,
                "orchestration_cpu_ms": cpu,
                "rss_mb": rss,
                "orchestration_limits": limits,
            }
        )

    for n, run in runs.items():
        summary = orchestration[str(n)]
        memory = ""
        if n == sizes[-1]:
            memory = f"; RSS {run['rss_start_mb']} -> {run['rss_after_mb']} MB"
        print(
            f"{n:>4} packages through one embedded stack ({run['runs']} run(s)): median "
            f"{summary['median']} ms, p95 {summary['p95']} ms ({run['wall_seconds']} s; "
            f"executions {run['statuses']}{memory})"
        )
    print(f"last {TAIL} of {sizes[-1]}: median {tail['median']} ms, p95 {tail['p95']} ms")
    print(f"CPU per package (median): first {TAIL} {cpu['first_50']} ms, last {cpu['last_50']} ms")
    ok_ratio = ratio <= P95_RATIO_LIMIT
    ok_rss = growth < RSS_GROWTH_LIMIT_MB
    print(
        f"p95 at {sizes[-1]} / p95 at {sizes[0]}: {ratio} (limit {P95_RATIO_LIMIT}) "
        f"{'ok' if ok_ratio else 'OVER'}; RSS growth {growth} MB "
        f"(limit {RSS_GROWTH_LIMIT_MB:.0f}) {'ok' if ok_rss else 'OVER'}"
    )
    return 0 if ok_ratio and ok_rss else 1


if __name__ == "__main__":
    sys.exit(main())
