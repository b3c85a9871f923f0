"""``maestro eval report``: one self-contained HTML page from stored eval runs and plots.

Per scenario a checkpoint grid, then each checkpoint's findings (the expectation, what the
reads said, the evidence behind it, the packages it covered), the shame rows the run recorded,
and the labeled sets' reliability diagrams and risk-coverage curves (PNG, embedded). Everything
comes from files written earlier: the runs' rows (``maestro eval run`` saves them) and the plots
(``maestro eval labeled`` writes them); nothing is re-run.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from maestro_dev.eval_harness.runner import ScenarioResult

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1d1d1f; max-width: 72rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; } h3 { font-size: 1rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
td, th { border: 1px solid #d2d2d7; padding: .3rem .5rem; text-align: left; vertical-align: top; }
.pass { background: #e3f6e8; } .fail { background: #fde2e1; } .none { color: #86868b; }
code, .mono { font-family: ui-monospace, monospace; font-size: 12px; }
.plots img { max-width: 32rem; margin: .5rem 1rem .5rem 0; border: 1px solid #d2d2d7; }
details { margin: .3rem 0 .8rem; } summary { cursor: pointer; }
"""


class ReportInputs(BaseModel):
    model_config = ConfigDict(frozen=True)

    runs_file: Path | None
    results: tuple[ScenarioResult, ...]
    plots: tuple[Path, ...]


def latest_runs_file(directory: Path) -> Path | None:
    files = sorted(directory.glob("eval-run-*.json"), key=lambda p: p.stat().st_mtime)
    return files[-1] if files else None


def load_inputs(runs_file: Path | None, plots_dir: Path) -> ReportInputs:
    results: list[ScenarioResult] = []
    if runs_file is not None:
        data = json.loads(runs_file.read_text())
        results = [ScenarioResult.model_validate(r) for r in data.get("results", [])]
    found = sorted(plots_dir.rglob("*.png")) if plots_dir.is_dir() else []
    # A scripted run's plots check the plumbing, not a model: its metrics.json says
    # "measurement": false, and the report leaves them out.
    plots = tuple(p for p in found if _a_measurement(p.parent))
    return ReportInputs(runs_file=runs_file, results=tuple(results), plots=plots)


def _a_measurement(directory: Path) -> bool:
    metrics = directory / "metrics.json"
    if not metrics.is_file():
        return True
    return bool(json.loads(metrics.read_text()).get("measurement", True))


def _e(value: Any) -> str:
    return html.escape(str(value))


def _grid(results: Sequence[ScenarioResult]) -> str:
    widest = max((len(r.checkpoints) for r in results), default=0)
    head = "".join(f"<th>checkpoint {n + 1}</th>" for n in range(widest))
    rows = []
    for result in results:
        cells = []
        for checkpoint in result.checkpoints:
            mark = "pass" if checkpoint.passed else "fail"
            cells.append(
                f'<td class="{mark}" title="{_e(checkpoint.reason)}">'
                f'<a href="#{_e(result.id)}-{_e(checkpoint.id)}">{_e(checkpoint.id)}</a></td>'
            )
        cells += ['<td class="none">–</td>'] * (widest - len(result.checkpoints))
        mark = "pass" if result.passed else "fail"
        rows.append(
            f'<tr><td class="{mark}"><a href="#{_e(result.id)}">{_e(result.id)}</a></td>'
            f"{''.join(cells)}</tr>"
        )
    return f"<table><tr><th>scenario</th>{head}</tr>{''.join(rows)}</table>"


def _known(checkpoint: Any) -> str:
    """A known failure's mark: the bug it exposes, and whether it still fails as marked."""
    why = " ".join(getattr(checkpoint, "known_failure", "").split())
    if not why:
        return ""
    state = "still fails, as marked" if not checkpoint.passed else "passes: remove the mark"
    return f"<p><b>Known failure</b> ({state}): {_e(why)}</p>"


def _findings(checkpoint: Any) -> str:
    if not checkpoint.findings:
        return f"<p>{_e(checkpoint.reason)}</p>"
    rows = []
    for finding in checkpoint.findings:
        mark = "pass" if finding.passed else "fail"
        evidence = (
            f"<br><span class='mono'>{_e(finding.evidence)}</span>" if finding.evidence else ""
        )
        rows.append(
            f'<tr class="{mark}"><td>{_e(finding.expectation)}</td>'
            f"<td>{_e(finding.reason)}{evidence}</td></tr>"
        )
    return (
        "<table><tr><th>expectation</th><th>what the reads said</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _shame(result: ScenarioResult) -> str:
    rows = [
        row
        for checkpoint in result.rows.get("checkpoints", [])
        for row in checkpoint.get("shame", []) or []
    ]
    if not rows:
        return "<p class='none'>No shame rows recorded for this run.</p>"
    body = "".join(f"<tr><td class='mono'>{_e(json.dumps(r)[:400])}</td></tr>" for r in rows)
    return f"<table><tr><th>shame row</th></tr>{body}</table>"


def _scenario(result: ScenarioResult) -> str:
    parts = [
        f'<h2 id="{_e(result.id)}">{"✔" if result.passed else "✘"} {_e(result.id)}: '
        f"{_e(result.title)}</h2>",
        f"<p><b>Written to catch:</b> {_e(' '.join(result.naive_failure.split()))}</p>",
        f"<p class='mono'>run {_e(result.run_id)} · execution {_e(result.execution_status)}"
        f" · {result.wall_seconds:.1f} s</p>",
    ]
    if result.error:
        parts.append(f"<p class='fail'>{_e(result.error)}</p>")
    for checkpoint in result.checkpoints:
        mark = "pass" if checkpoint.passed else "fail"
        packages = ", ".join(checkpoint.packages) or "none"
        parts.append(
            f'<h3 id="{_e(result.id)}-{_e(checkpoint.id)}" class="{mark}">{_e(checkpoint.id)}'
            f"</h3><p class='mono'>packages: {_e(packages)}</p>{_known(checkpoint)}"
            f"{_findings(checkpoint)}"
        )
    parts.append(f"<details><summary>shame rows</summary>{_shame(result)}</details>")
    return "\n".join(parts)


def _plots(plots: Sequence[Path]) -> str:
    if not plots:
        return (
            "<p class='none'>No plots yet: <code>maestro eval labeled</code> writes the "
            "reliability diagrams and risk-coverage curves.</p>"
        )
    images = []
    for path in plots:
        data = base64.b64encode(path.read_bytes()).decode()
        label = f"{path.parent.name}/{path.name}"
        images.append(
            f'<figure><img alt="{_e(label)}" src="data:image/png;base64,{data}">'
            f"<figcaption class='mono'>{_e(label)}</figcaption></figure>"
        )
    return f"<div class='plots'>{''.join(images)}</div>"


def render(inputs: ReportInputs) -> str:
    results = inputs.results
    passed = sum(r.passed for r in results)
    checkpoints = [c for r in results for c in r.checkpoints]
    source = str(inputs.runs_file) if inputs.runs_file else "no stored run"
    body = [
        "<h1>maestro evals</h1>",
        f"<p>{passed}/{len(results)} scenarios passed, "
        f"{sum(c.passed for c in checkpoints)}/{len(checkpoints)} checkpoints "
        f"(<span class='mono'>{_e(source)}</span>). Every grade below was read from the "
        "decision log, the WO store and the messages by SID, never from a pipeline's return "
        "value.</p>",
        _grid(results) if results else "<p class='none'>No scenario runs stored.</p>",
        "<h2>Calibration (labeled sets)</h2>",
        _plots(inputs.plots),
        *(_scenario(r) for r in results),
    ]
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>maestro evals</title>"
        f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>\n"
    )
