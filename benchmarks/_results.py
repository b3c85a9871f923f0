"""bench/results.json and bench/results.md, shared by every benchmark.

Each benchmark *merges* its keys into results.json (read what is there, update, write), and
results.md is regenerated from the merged JSON, so running one benchmark never erases another's
figures. Sections for the keys this module knows are written as prose and tables; any other key
is shown as JSON under its name, so a new benchmark's figures appear before anyone formats them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "bench"


def merge_results(updates: dict[str, Any], out: Path = OUT) -> dict[str, Any]:
    """Merge ``updates`` into ``out/results.json``, rewrite ``out/results.md``; the merged dict."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    results: dict[str, Any] = {}
    if path.exists():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            loaded = None  # a torn file from an interrupted run: start over rather than crash
        if isinstance(loaded, dict):
            results = loaded
    results.update(updates)
    path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (out / "results.md").write_text(render_markdown(results), encoding="utf-8")
    return results


def _model_section(r: dict[str, Any]) -> list[str]:
    calls = r["model_calls_per_package"]
    tokens = r["prompt_tokens_by_history"]
    build_ms = r["window_build_ms_by_history"]
    moto = r["window_reads_on_moto_ms"]
    how = r["prompt_tokens_method"]
    spread = max(tokens[k] for k in ("100", "1000", "10000"))
    low = min(tokens[k] for k in ("100", "1000", "10000"))
    return [
        "## Model calls per one-message package (scripted model; probe and pre-check included)",
        "",
        "Written by benchmarks/bench_model.py.",
        "",
        f"- clear (the reasoning samples agree): **{calls['clear']}** calls",
        f"- ambiguous (the samples split): **{calls['ambiguous']}** calls",
        "",
        f"## Reasoning prompt tokens by prior history ({how})",
        "",
        "| prior messages and decisions | prompt tokens | window build (ms, median of 20) |",
        "|---|---|---|",
        *(f"| {n} | {tokens[n]} | {build_ms[n]} |" for n in sorted(tokens, key=int)),
        "",
        f"Tokens at 100 / 1,000 / 10,000 are within {100 * (spread - low) / low:.1f} % of each "
        f"other; the window at 10,000 takes {build_ms['10000'] / build_ms['100']:.2f}x the time "
        "at 100.",
        "",
        "The window's two reads on moto's DynamoDB (its Query filters the whole partition in "
        f"Python, unlike DynamoDB's): {moto['100']} ms at 100, {moto['10000']} ms at 10,000.",
        "",
    ]


_MODEL_KEYS = (
    "model_calls_per_package",
    "prompt_tokens_by_history",
    "prompt_tokens_method",
    "window_build_ms_by_history",
    "window_reads_on_moto_ms",
)


def _imports_section(r: dict[str, Any]) -> list[str]:
    baseline = r["import_baseline_ms"]
    handlers: dict[str, float] = r["handler_import_ms"]
    limits: dict[str, float] = r.get("handler_import_limit", {})
    samples: dict[str, list[float]] = r.get("handler_import_samples_ms", {})
    cpu: dict[str, float] = r.get("handler_import_cpu_ms", {})
    baseline_cpu = r.get("import_baseline_cpu_ms")
    runs = r.get("import_runs", "?")
    lines = [
        "## Handler cold import (fresh interpreters)",
        "",
        "Written by benchmarks/bench_imports.py: the time of `import handler` in a fresh "
        "interpreter with `functions/<name>` and `layers/maestro/python` on the path, median "
        f"of {runs} interpreters per handler (wall clock; process CPU time alongside). The "
        "baseline is `import boto3, aws_lambda_powertools, pydantic` plus constructing a "
        "Powertools `Tracer()`, measured in the same run, interleaved with the handlers.",
        "",
        f"Baseline: **{baseline} ms** wall, {baseline_cpu} ms CPU "
        f"(wall samples: {samples.get('baseline', [])}).",
        "",
        "| handler | import ms | ratio | limit | CPU ms | CPU ratio | wall samples (ms) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, ms in sorted(handlers.items()):
        ratio = ms / baseline
        limit = limits.get(name)
        verdict = "" if limit is None else (" ok" if ratio <= limit else " **over**")
        shown = "" if limit is None else f"{limit:.2f}x{verdict}"
        cpu_ms = cpu.get(name)
        cpu_shown = f"{cpu_ms} | {cpu_ms / baseline_cpu:.2f}x" if cpu_ms and baseline_cpu else " | "
        lines.append(
            f"| {name} | {ms} | {ratio:.2f}x | {shown} | {cpu_shown} | {samples.get(name, [])} |"
        )
    lines.append("")
    floor = r.get("safety_floor_first_call_ms")
    if floor is not None:
        lines += [
            "The safety floor compiles its patterns on first use, not at import, so its first "
            "call in a fresh interpreter pays for them (median ms): "
            f"{floor['benign_first_call']} on a benign text, {floor['emergency_first_call']} on "
            f"an emergency; a later call {floor['later_call']}. The inbound webhook's first text "
            "in a container pays it once.",
            "",
        ]
    return lines


_IMPORT_KEYS = (
    "handler_import_ms",
    "import_baseline_ms",
    "handler_import_ratio",
    "handler_import_limit",
    "handler_import_samples_ms",
    "handler_import_cpu_ms",
    "import_baseline_cpu_ms",
    "handler_import_cpu_ratio",
    "import_runs",
    "safety_floor_first_call_ms",
)


def _load_section(r: dict[str, Any]) -> list[str]:
    load = r["load"]
    setup = load.get("setup", {})
    return [
        "## Load through `maestro serve` over HTTP",
        "",
        f"Written by benchmarks/load_http.py: {load['messages']:,} signed Twilio webhooks from "
        f"{setup.get('parties', '?')} parties ({setup.get('unknown_parties', '?')} of them "
        f"unknown numbers) over one virtual hour with bursts, sent by "
        f"{setup.get('senders', '?')} concurrent sender threads (a process of their own, a new "
        f"connection per request) to `maestro serve --speed {setup.get('speed', '?')}` on "
        "loopback, offline brain. Every figure but the latencies is read back from the stores "
        "and the executions once the load has drained.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| messages sent / answered 200 / stored | {load['messages']} / "
        f"{load.get('accepted', '?')} / {load.get('stored', '?')} |",
        f"| connection errors (resets, drops, timeouts) | {load.get('connection_errors', '?')} |",
        f"| packages | {load['packages']} |",
        f"| failed open | {load['failed_open']} |",
        f"| lost / duplicated | {load['lost']} / {load['duplicated']} |",
        f"| order violations (packages / claims / messages) | {load['order_violations']} "
        f"({load.get('package_order_violations', '?')} / "
        f"{load.get('claim_order_violations', '?')} / "
        f"{load.get('message_order_violations', '?')}) |",
        f"| emergencies escalated at once | {load.get('emergencies_escalated', '?')} / "
        f"{load.get('emergencies', '?')} |",
        f"| the watcher's ledger: evidence / shame | {load.get('evidence', '?')} / "
        f"{load.get('shame', '?')} |",
        f"| webhook latency p50 / p95 / max | {load['webhook_p50_ms']} / "
        f"{load['webhook_p95_ms']} / {load.get('webhook_max_ms', '?')} ms |",
        f"| wall time (until sent / draining after) | {load['wall_seconds']} s "
        f"({load.get('send_seconds', '?')} / {load.get('drain_seconds', '?')}) |",
        "",
        *_load_dispatch_lines(load),
    ]


def _load_dispatch_lines(load: dict[str, Any]) -> list[str]:
    dispatch = load.get("dispatch")
    if not dispatch:
        return []
    by_outcome = ", ".join(f"{k} {v}" for k, v in dispatch["wo_by_outcome"].items())
    return [
        "Then the server's clock stopped and every dispatch run was carried to its end on the "
        f"stack's own advance ({dispatch['virtual_hours_carried']} virtual hours, "
        f"{dispatch['seconds']} s): {dispatch['vendors']} vendors answered their offers by signed "
        f"SMS ({dispatch['vendor_replies']} texts: some 1, some 2, some never).",
        "",
        "| figure | value |",
        "|---|---|",
        f"| WOs opened by the load | {dispatch['wo_created']} ({by_outcome}) |",
        f"| WOs without an outcome (assigned or the on-call PM paged) | "
        f"{load['wo_without_outcome']} (closed apart: {dispatch['wo_closed']}) |",
        f"| offers texted / texted twice | {dispatch['offers_texted']} / "
        f"{load['duplicate_offers']} |",
        "",
    ]


def _faults_section(r: dict[str, Any]) -> list[str]:
    matrix = r["fault_matrix"]
    violations = matrix["violations"]
    return [
        "## Fault matrix (fault × stage → outcome)",
        "",
        "Written by benchmarks/fault_matrix.py (`make faults`): each fault aimed at each stage on "
        "the embedded stack, read back from the stores.",
        "",
        "```",
        matrix["table"],
        "```",
        "",
        f"{matrix['runs']} runs in {matrix['seconds']} s ({matrix['cpu_seconds']} s CPU); "
        f"repository calls never faulted: {len(matrix['repository_calls_never_faulted'])}; "
        + (f"**{len(violations)} violation(s)**." if violations else "no violation."),
        "",
    ]


def _orchestration_section(r: dict[str, Any]) -> list[str]:
    runs: dict[str, dict[str, float]] = r["orchestration_ms"]
    rss: dict[str, float] = r["rss_mb"]
    limits: dict[str, float] = r["orchestration_limits"]
    counts: dict[str, int] = r.get("orchestration_runs", {})
    sizes = sorted(runs, key=int)
    after = next(k for k in rss if k.startswith("after_"))
    lines = [
        "## Cost per package on the embedded stack",
        "",
        "Written by benchmarks/bench_orchestration.py: N one-message packages, one after another, "
        "through one embedded stack; a package's time is the wall clock from the webhook to its "
        f"execution's end. The runs of {sizes[0]} repeat on fresh stacks, in a second process, "
        f"while the run of {sizes[-1]} goes on, so both are measured over the same minutes.",
        "",
        "| packages | runs | median ms | p95 ms |",
        "|---|---|---|---|",
        *(
            f"| {n} | {counts.get(n, '?')} | {runs[n]['median']} | {runs[n]['p95']} |"
            for n in sizes
        ),
    ]
    tail = r.get("orchestration_tail_ms")
    if tail:
        lines.append(f"| the last 50 of {sizes[-1]} | 1 | {tail['median']} | {tail['p95']} |")
    ratio_ok = limits["p95_ratio"] <= limits["p95_ratio_limit"]
    rss_ok = limits["rss_growth_mb"] < limits["rss_growth_limit_mb"]
    lines += [
        "",
        f"p95 at {sizes[-1]} over p95 at {sizes[0]}: **{limits['p95_ratio']}** "
        f"(limit {limits['p95_ratio_limit']}, {'ok' if ratio_ok else '**over**'}).",
        "",
        f"Resident memory: {rss['start']} MB with the stack up, {rss[after]} MB "
        f"{after.replace('_', ' ')} packages: **{limits['rss_growth_mb']} MB** more "
        f"(limit {limits['rss_growth_limit_mb']}, {'ok' if rss_ok else '**over**'}).",
        "",
    ]
    cpu = r.get("orchestration_cpu_ms")
    if cpu:
        lines += [
            f"Process CPU per package (median, all threads): {cpu['first_50']} ms over the first "
            f"50, {cpu['last_50']} ms over the last 50.",
            "",
        ]
    return lines


_ORCHESTRATION_KEYS = (
    "orchestration_ms",
    "orchestration_runs",
    "orchestration_tail_ms",
    "orchestration_cpu_ms",
    "rss_mb",
    "orchestration_limits",
)


def _directory_section(r: dict[str, Any]) -> list[str]:
    size = r["directory_import_size"]
    return [
        "## Directory import into `maestro serve`",
        "",
        "Written by benchmarks/bench_directory.py: `maestro directory import` as a fresh process "
        "against a running `maestro serve`.",
        "",
        f"- {size['properties']} properties, {size['tenants']} tenants, {size['vendors']} "
        f"vendors, {size['pms']} PMs, {size['on_call_shifts']} on-call shifts: "
        f"**{r['directory_import_s']} s** (budget {r['directory_import_budget_s']:.0f} s)",
        f"- the same folder again: {r['directory_reimport_s']} s, "
        f"{r['directory_reimport_changes']} changes",
        "",
    ]


_DIRECTORY_KEYS = (
    "directory_import_s",
    "directory_reimport_s",
    "directory_reimport_changes",
    "directory_import_size",
    "directory_import_budget_s",
)


def _dispatch_section(r: dict[str, Any]) -> list[str]:
    d = r["dispatch"]
    goal = d["states_first_offer_goal"]
    verdict = "ok" if d["states_first_offer"] <= goal else "**over**"
    return [
        "## States per work order dispatched at the first offer",
        "",
        "Written by benchmarks/bench_dispatch.py: on the embedded stack, driven by signed SMS "
        "only (the tenant's text opens the WO, the tenant answers the gather question, the first "
        "vendor answers 1); the states the WO's execution entered, read from its history.",
        "",
        f"- routine, with gather: **{d['states_first_offer']}** states (goal <= {goal}, {verdict})",
        f"- emergency at night (skips gather, an after-hours vendor): "
        f"**{d['states_first_offer_emergency']}** states",
        "",
        "Routine path: " + " → ".join(d["states_first_offer_path"]),
        "",
    ]


def _cost_section(r: dict[str, Any]) -> list[str]:
    from _cost import render_tables

    return [
        "## What a package costs, and where the stack breaks",
        "",
        "Written by benchmarks/bench_cost.py (docs/cost.md explains the counting and the prices).",
        "",
        render_tables(r["cost"], r.get("scale")),
        "",
    ]


_SECTIONS: tuple[tuple[tuple[str, ...], Callable[[dict[str, Any]], list[str]]], ...] = (
    (_MODEL_KEYS, _model_section),
    (_IMPORT_KEYS, _imports_section),
    (("load",), _load_section),
    (("fault_matrix",), _faults_section),
    (("dispatch",), _dispatch_section),
    (_ORCHESTRATION_KEYS, _orchestration_section),
    (_DIRECTORY_KEYS, _directory_section),
    (("cost", "scale"), _cost_section),
)


def render_markdown(results: dict[str, Any]) -> str:
    """results.md from the merged results: one section per benchmark that has written its keys."""
    lines = [
        "# maestro benchmark results",
        "",
        "Written by `make bench` from bench/results.json.",
        "",
    ]
    shown: set[str] = set()
    for keys, render in _SECTIONS:
        present = [k for k in keys if k in results]
        if not present:
            continue
        try:
            lines += render(results)
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            continue  # a partial set of keys (an older file): shown raw below instead
        shown.update(present)
    rest = sorted(k for k in results if k not in shown)
    if rest:
        lines += ["## Other figures", ""]
        for key in rest:
            lines += [f"### {key}", "", "```json", json.dumps(results[key], indent=2), "```", ""]
    return "\n".join(lines)


__all__ = ["OUT", "merge_results", "render_markdown"]
