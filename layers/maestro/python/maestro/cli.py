"""The ``maestro`` command."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from maestro.demo import StoryRun, run_all

BANNER = """\
maestro demo: the pure domain core (issue #2), not yet the running system.
  What runs: consensus over k brain samples, then dispose, in-process.
  What is scripted: every brain sample below was written by hand in maestro/demo.py; no model
  was called. Nothing is sent, stored or executed: there is no AWS, no Twilio, no DynamoDB yet.
  The embedded stack (Step Functions on moto, the real webhooks) replaces this with #4.
"""


def _action_line(lane: str, target: str | None, params: dict[str, Any]) -> str:
    detail = ", ".join(f"{k}={v!r}" for k, v in params.items() if v not in (None, (), "", []))
    return f"{lane}({target or '-'})" + (f" {detail}" if detail else "")


def _print_run(run: StoryRun, number: int, out: TextIO) -> None:
    story, consensus, disposal = run.story, run.consensus, run.disposal
    print(f"\n[{number}] {story.title}", file=out)
    print(f"    {story.lesson}", file=out)
    who = story.sender.name if story.sender else "unknown number"
    print(f"  sender: {who} {story.sender_phone}", file=out)
    for context in story.contexts:
        print(f"  open:   {context.line()}", file=out)
    for message in run.package.messages:
        print(f"  text:   \u201c{message.body}\u201d", file=out)
    print(f"  package {run.package.package_id} (trigger {run.package.trigger})", file=out)
    for sample in run.samples:
        if sample.actions is None:
            print(f"    sample {sample.index}: FAILED {sample.failure} ({sample.detail})", file=out)
        else:
            plan = "; ".join(f"{a.lane}({a.target_wo_id or '-'})" for a in sample.actions)
            print(f"    sample {sample.index}: {plan}", file=out)
    votes = ", ".join(f"{key} {n}/{consensus.k}" for key, n in consensus.votes.items())
    print(
        f"  consensus: {consensus.status} ({consensus.reason}); votes {votes}; "
        f"entropy {consensus.entropy_bits:.2f} bits",
        file=out,
    )
    print(f"  route: {disposal.route}; queue:", file=out)
    for queued in disposal.actions:
        action = queued.action
        params = action.params.model_dump(mode="json")
        line = _action_line(action.lane, action.target_wo_id, params)
        print(f"    {queued.idempotency_key}  {line}", file=out)
    print("  decisions:", file=out)
    for d in disposal.decisions:
        flags = [
            name
            for name, on in (
                ("interrupted", d.interrupted),
                ("abstained", d.abstained),
                ("fallback", d.fallback),
            )
            if on
        ]
        print(
            f"    {d.disposition:<15} {d.lane}({d.target_wo_id or '-'}) "
            f"relation={d.context_relation} conf={d.confidence:.2f}"
            + (f" [{', '.join(flags)}]" if flags else "")
            + f": {d.reason}",
            file=out,
        )


def _demo_json(runs: Sequence[StoryRun], wall_seconds: float) -> dict[str, Any]:
    return {
        "brain": "scripted",
        "stack": "domain core only (no AWS)",
        "packages": len(runs),
        "actions": [
            {
                "package_id": run.package.package_id,
                "lane": q.action.lane,
                "target_wo_id": q.action.target_wo_id,
            }
            for run in runs
            for q in run.disposal.actions
        ],
        "stories": [
            {
                "title": run.story.title,
                "consensus": run.consensus.model_dump(mode="json", exclude={"verdicts"}),
                "decisions": [d.model_dump(mode="json") for d in run.disposal.decisions],
            }
            for run in runs
        ],
        "evidence": 0,
        "shame": 0,
        "wall_seconds": round(wall_seconds, 3),
    }


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    started = time.perf_counter()
    runs = run_all()
    wall = time.perf_counter() - started
    if args.json:
        json.dump(_demo_json(runs, wall), out, indent=2)
        out.write("\n")
        return 0
    print(BANNER, file=out)
    for number, run in enumerate(runs, start=1):
        _print_run(run, number, out)
    queued = sum(len(run.disposal.actions) for run in runs)
    print(
        f"\n{len(runs)} packages, {queued} actions queued, "
        f"{sum(run.disposal.abstained for run in runs)} abstained; {wall * 1000:.0f} ms.",
        file=out,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="maestro", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the scripted stories through the domain core")
    demo.add_argument("--json", action="store_true", help="print one JSON object")
    demo.set_defaults(handler=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = args.handler
    result: int = handler(args, out or sys.stdout)
    return result


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
