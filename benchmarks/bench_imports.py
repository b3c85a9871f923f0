"""Cold start: what importing each Lambda handler costs, against the libraries it cannot avoid.

Merges into bench/results.json (and regenerates bench/results.md):

- ``handler_import_ms``: ``{"inbound_sms": ms, "flusher": ms, ...}`` for every
  ``functions/<name>/handler.py``: the time of ``import handler`` in a fresh interpreter with
  ``functions/<name>`` and ``layers/maestro/python`` on ``PYTHONPATH`` (as the Lambda runtime
  has the function's code and the layer), median of ``--runs`` interpreters (at least 5).
- ``import_baseline_ms``: the same for a fresh interpreter running
  ``import boto3, aws_lambda_powertools, pydantic`` and constructing a Powertools ``Tracer()``:
  what any handler on this stack pays before its own code.
- ``handler_import_ratio`` (each handler over the baseline), ``handler_import_limit`` (1.10 for
  the inbound webhook, 1.25 for the others), ``handler_import_samples_ms`` (every raw sample,
  the baseline's under ``"baseline"``) and ``import_runs``.
- ``safety_floor_first_call_ms``: the first ``safety_floor()`` call in a fresh interpreter (the
  floor compiles its patterns on first use, so this is where their cost went), for a benign and
  an emergency text, and a later call.

The time is taken inside each interpreter around the import alone (interpreter start-up is left
out of both sides). The handlers and the baseline are measured in the same run, interleaved
round by round, so a busy machine slows both alike; each target runs once first, unmeasured, so
bytecode caches are written before any sample. Exits 1 when a handler is over its limit.

Run: .venv/bin/python benchmarks/bench_imports.py [--runs N]   (make bench runs it)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _results import merge_results

REPO = Path(__file__).resolve().parents[1]
LAYER = REPO / "layers" / "maestro" / "python"
FUNCTIONS = REPO / "functions"
INBOUND = "inbound_sms"
LIMITS = {INBOUND: 1.10}
DEFAULT_LIMIT = 1.25
BASELINE = "baseline"

# Prints "wall_ms cpu_ms" for the body alone.
_TIMED = """\
import time
_w, _c = time.perf_counter(), time.process_time()
{body}
print(round((time.perf_counter() - _w) * 1000, 2), round((time.process_time() - _c) * 1000, 2))
"""
_BASELINE_BODY = """\
import boto3, aws_lambda_powertools, pydantic
from aws_lambda_powertools import Tracer
Tracer()"""
# The first safety_floor() call of a fresh interpreter, then a second call on the same text.
_FLOOR_PROBE = """\
import time
from maestro.domain.safety import safety_floor
_t = time.perf_counter()
safety_floor({text!r})
_first = (time.perf_counter() - _t) * 1000
_t = time.perf_counter()
safety_floor({text!r})
print(round(_first, 2), round((time.perf_counter() - _t) * 1000, 2))
"""
FLOOR_TEXTS = {
    "benign": "Hi, the kitchen tap has been dripping since Monday, can someone come by this week?",
    "emergency": "i smel gas in the kitchen and my head hurts",
}


def handler_names() -> list[str]:
    return sorted(p.parent.name for p in FUNCTIONS.glob("*/handler.py"))


def _env(pythonpath: list[Path]) -> dict[str, str]:
    # A clean environment, the same for every target: no MAESTRO_*/POWERTOOLS_* settings from
    # the caller's shell (nothing a handler needs at import), no inherited PYTHONPATH.
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    return env


def _run(code: str, pythonpath: list[Path]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=_env(pythonpath),
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"probe failed ({done.returncode}):\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]


def _targets(only: list[str] | None = None) -> dict[str, tuple[str, list[Path]]]:
    targets = {BASELINE: (_TIMED.format(body=_BASELINE_BODY), [LAYER])}
    for name in handler_names():
        if only and name not in only:
            continue
        targets[name] = (_TIMED.format(body="import handler"), [FUNCTIONS / name, LAYER])
    return targets


Samples = dict[str, dict[str, list[float]]]
"""``{"wall": {target: [ms, ...]}, "cpu": {target: [ms, ...]}}``."""


def measure(runs: int, only: list[str] | None = None) -> Samples:
    """Raw samples (wall and CPU ms) per target, the baseline included, interleaved by round."""
    targets = _targets(only)
    for code, path in targets.values():
        _run(code, path)  # unmeasured: writes the bytecode caches
    samples: Samples = {
        "wall": {name: [] for name in targets},
        "cpu": {name: [] for name in targets},
    }
    order = list(targets)
    for round_ in range(runs):
        # Rotate the order each round so no target always runs right after the same neighbour.
        shift = round_ % len(order)
        for name in order[shift:] + order[:shift]:
            code, path = targets[name]
            wall, cpu = _run(code, path).split()
            samples["wall"][name].append(float(wall))
            samples["cpu"][name].append(float(cpu))
    return samples


def floor_first_call(runs: int) -> dict[str, float]:
    """Median ms of the floor's first call per kind of text, and of a later call."""
    out: dict[str, float] = {}
    later: list[float] = []
    for kind, text in FLOOR_TEXTS.items():
        rows = [_run(_FLOOR_PROBE.format(text=text), [LAYER]).split() for _ in range(runs)]
        out[f"{kind}_first_call"] = round(statistics.median(float(r[0]) for r in rows), 1)
        later += [float(r[1]) for r in rows]
    out["later_call"] = round(statistics.median(later), 2)
    return out


def _medians(samples: dict[str, list[float]]) -> dict[str, float]:
    return {name: round(statistics.median(values), 1) for name, values in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per target (>=5)")
    parser.add_argument(
        "--only",
        action="append",
        metavar="HANDLER",
        help="measure these handlers alone and print, without writing results (for iterating)",
    )
    args = parser.parse_args()
    runs = max(5, args.runs)

    samples = measure(runs, args.only)
    wall, cpu = _medians(samples["wall"]), _medians(samples["cpu"])
    baseline, baseline_cpu = wall.pop(BASELINE), cpu.pop(BASELINE)
    ratios = {name: round(ms / baseline, 3) for name, ms in wall.items()}
    cpu_ratios = {name: round(ms / baseline_cpu, 3) for name, ms in cpu.items()}
    limits = {name: LIMITS.get(name, DEFAULT_LIMIT) for name in wall}
    floor = floor_first_call(runs)
    if not args.only:  # a partial run is printed, never recorded
        merge_results(
            {
                "handler_import_ms": wall,
                "import_baseline_ms": baseline,
                "handler_import_ratio": ratios,
                "handler_import_limit": limits,
                "handler_import_samples_ms": samples["wall"],
                "handler_import_cpu_ms": cpu,
                "import_baseline_cpu_ms": baseline_cpu,
                "handler_import_cpu_ratio": cpu_ratios,
                "import_runs": runs,
                "safety_floor_first_call_ms": floor,
            }
        )

    print(
        f"import baseline (boto3, powertools, pydantic, Tracer()): {baseline} ms wall, "
        f"{baseline_cpu} ms CPU (medians of {runs})"
    )
    print(f"  wall samples: {samples['wall'][BASELINE]}")
    over = []
    for name, ms in wall.items():
        verdict = "ok" if ratios[name] <= limits[name] else "OVER"
        if verdict == "OVER":
            over.append(name)
        print(
            f"  {name:<12} {ms:>7.1f} ms {ratios[name]:5.2f}x (limit {limits[name]:.2f}x) "
            f"{verdict:<4}  CPU {cpu[name]:>6.1f} ms {cpu_ratios[name]:5.2f}x   "
            f"wall samples {samples['wall'][name]}"
        )
    print(
        "safety floor, first call in a fresh interpreter: "
        f"benign text {floor['benign_first_call']} ms, emergency text "
        f"{floor['emergency_first_call']} ms; a later call {floor['later_call']} ms"
    )
    if over:
        print(f"over the limit (wall-clock medians): {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
