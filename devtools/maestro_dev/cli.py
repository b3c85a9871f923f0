"""The ``maestro`` command.

- ``maestro demo [--json]``: the leak-204 story end to end on the embedded stack.
- ``maestro demo --core``: the scripted stories through the pure domain core alone.
- ``maestro serve [--port] [--speed] [--step]``: the embedded stack as a loopback server,
  printing each package as it flows (a text is processed about 5 s after it is sent).
- ``maestro send --from +1… "text"``: a signed SMS to a running ``maestro serve``.
- ``maestro executions`` / ``maestro step <execution>``: list paused gates, release one; on
  ``maestro serve`` (``--url``, the default) or on a deployed stack (``--stack NAME`` or
  ``--env dev``), through boto3 and the stack's outputs.
- ``maestro ledger [--package ID] [--wo WO-…] [--shame] [--json]``: the watcher's Evidence and
  Shame rows, from ``maestro serve`` or a deployed stack's ledger table.
- ``maestro eval labeled --brain offline|anthropic|scripted [--out DIR]``: the labeled sets
  through the real stages, their metrics and plots (``maestro_dev.eval_harness.labeled``).
- ``maestro directory import DIR [--dry-run] [--prune] | export DIR | show PHONE|ID``: the
  directory from CSV files, on ``maestro serve`` or a deployed stack (docs/directory.md).
- ``maestro directory erase PHONE|ID``: erase a person, on ``maestro serve`` or a deployed
  stack (``maestro_dev.directory_erase``, docs/erase-and-retention.md).
- ``maestro wo show WO-… [--json] | list [--status S] [--property P] [--json]``: a work order
  with its timeline, dispatch run and execution, or a list; on ``maestro serve`` or a deployed
  stack (``maestro_dev.work_orders``, docs/work-orders.md).
- ``maestro console [--port]``: the eval playground, a local web page on 127.0.0.1 (its URL,
  with a token new each run, printed at start; ``maestro_dev.console``, docs/console.md).
- ``maestro twilio wire --env ENV [--dry-run]``: point the environment's Twilio number at its
  deployed stack (SMS URL, SMS fallback URL, status callback) and print what changed
  (``maestro_dev.twilio_wire``).

``maestro serve``'s operator routes (what ``executions``, ``step`` and ``ledger`` call) answer
only requests that carry the token serve makes for each run (header X-Maestro-Local-Token), are
addressed to loopback (127.0.0.1, localhost or [::1], with serve's port) and come from no other
web origin: a web page you visit can neither release a gate nor read the ledger. Serve prints
the token once at start and writes it to ``~/.maestro/serve-PORT.token`` (readable by you
alone), where these commands find it by the URL's port. Where that file is not at hand (another
user, a container), pass ``--token`` or set ``MAESTRO_LOCAL_TOKEN``. The token from the file is
sent to a loopback URL only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlencode

from maestro.domain.ledger import LedgerRow
from maestro_dev import directory_erase, twilio_wire, work_orders
from maestro_dev.cloud import console_url
from maestro_dev.core_demo import StoryRun, action_label, run_all
from maestro_dev.directory import cli as directory_cli
from maestro_dev.eval_harness import labeled as eval_labeled
from maestro_dev.eval_harness.cli import add_eval_parsers
from maestro_dev.local.operator_access import (
    TOKEN_ENV,
    TOKEN_HEADER,
    remove_token,
    token_path,
    write_token,
)
from maestro_dev.targets import DEFAULT_URL, add_target, cloud_target, http, local_call

if TYPE_CHECKING:  # the embedded stack is imported only by the commands that run it
    from maestro_dev.local.server import LocalServer
    from maestro_dev.local.stack import LocalStack

BANNER = """\
maestro demo --core: the pure domain core alone, over scripted stories.
  What runs: consensus over k brain samples, then dispose, in-process.
  What is scripted: every brain sample below was written by hand (maestro_dev/core_demo.py);
  no model was called. Nothing is sent, stored or executed. `maestro demo` (without --core)
  runs the whole system on the embedded stack.
"""


def _action_line(lane: str, target: str | None, params: dict[str, Any]) -> str:
    detail = ", ".join(f"{k}={v!r}" for k, v in params.items() if v not in (None, (), "", []))
    return action_label(lane, target) + (f" {detail}" if detail else "")


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
            plan = "; ".join(action_label(a.lane, a.target_wo_id) for a in sample.actions)
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
            f"    {d.disposition:<15} {action_label(d.lane, d.target_wo_id)} "
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
        # The core runs no stack, so nothing is read back: no figure rather than a made-up 0.
        "evidence": None,
        "shame": None,
        "wall_seconds": round(wall_seconds, 3),
    }


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    if not args.core:
        from maestro_dev.local.stack_demo import render, run_demo

        report = run_demo()
        if args.json:
            json.dump(report.as_json(), out, indent=2)
            out.write("\n")
        else:
            print(render(report), file=out)
        return 0
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


_RST_LITERAL = re.compile(r"``(.+?)``", re.S)


def plain_text(docstring: str) -> str:
    """A docstring as a terminal shows it: RST's ``literal`` markup dropped (the words kept)."""
    return _RST_LITERAL.sub(r"\1", docstring)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="maestro",
        description=plain_text(__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="leak-204 end to end on the embedded stack")
    demo.add_argument("--json", action="store_true", help="print one JSON object")
    demo.add_argument(
        "--core", action="store_true", help="only the scripted stories through the pure domain core"
    )
    demo.set_defaults(handler=cmd_demo)

    serve = sub.add_parser("serve", help="the embedded stack as a long-running local server")
    serve.add_argument("--port", type=int, default=8787)
    serve.add_argument(
        "--speed",
        type=float,
        default=SERVE_SPEED,
        help=f"virtual seconds per real second (default {SERVE_SPEED:g}: the 5-minute idle "
        "window after a text passes in 5 s; 1: real time; 0: the clock stands still)",
    )
    serve.add_argument(
        "--step",
        action="store_true",
        help="start every execution in step mode: it pauses at each gate",
    )
    serve.set_defaults(handler=cmd_serve)

    send = sub.add_parser("send", help="a signed SMS to a running `maestro serve`")
    send.add_argument("--from", dest="sender", required=True, help="E.164, e.g. +14155550100")
    send.add_argument("--url", default=DEFAULT_URL)
    send.add_argument("text")
    send.set_defaults(handler=cmd_send)

    executions = sub.add_parser("executions", help="list executions and their paused gates")
    add_target(executions)
    executions.add_argument(
        "--limit", type=int, default=20, help="cloud: the latest N (and every running one)"
    )
    executions.set_defaults(handler=cmd_executions)

    step = sub.add_parser("step", help="release an execution's paused gate")
    step.add_argument("execution", help="execution name or ARN")
    add_target(step)
    step.set_defaults(handler=cmd_step)

    ledger = sub.add_parser(
        "ledger", help="the watcher's evidence and shame rows (a package's, a WO's, or all)"
    )
    ledger.add_argument("--package", help="one package's rows (its id, pkg-…)")
    ledger.add_argument("--wo", help="one WO's rows (WO-…)")
    ledger.add_argument("--shame", action="store_true", help="only the shame rows")
    ledger.add_argument("--json", action="store_true", help="one JSON object per row")
    add_target(ledger)
    ledger.set_defaults(handler=cmd_ledger)

    console = sub.add_parser(
        "console",
        help="the eval playground: a local web page to run scenarios like a debugger",
        description="Serves the console on 127.0.0.1 and prints its URL (with this run's token).",
    )
    console.add_argument("--port", type=int, default=8790, help="0: any free port (8790)")
    console.add_argument(
        "--scenarios", default="evals/scenarios", help="a scenario file or directory"
    )
    console.add_argument(
        "--archive", default=".maestro/console-runs", help="where finished runs are kept"
    )
    console.add_argument(
        "--env",
        choices=("local", "dev"),
        default="local",
        help="local: the embedded stack (dev: a deployed stack; not built yet)",
    )
    console.set_defaults(handler=cmd_console)

    evals = sub.add_parser("eval", help="evals: scenarios on the embedded stack, labeled sets")
    eval_commands = evals.add_subparsers(dest="eval_command", required=True)
    add_eval_parsers(eval_commands)
    eval_labeled.add_parser(eval_commands)
    twilio_wire.add_parser(sub)
    work_orders.add_parser(sub, add_target)
    directory_erase.add_parser(directory_cli.add_parser(sub, add_target), add_target)
    return parser


SERVE_SPEED = 60.0
"""`maestro serve`'s default --speed, virtual seconds per real second: the 5-minute idle window
after a text passes in 5 s, so a text sent is processed within seconds (and an offer's 4 hours
pass in 4 minutes)."""


def _token() -> str:
    from maestro_dev.local.stack import DEFAULT_TWILIO_TOKEN

    return os.environ.get("TWILIO_AUTH_TOKEN", DEFAULT_TWILIO_TOKEN)


def cmd_console(args: argparse.Namespace, out: TextIO) -> int:
    if args.env != "local":
        print(
            "maestro console: --env dev is not built yet: the console talks to a Controller "
            "(maestro_dev.console.controller); only the embedded stack's is implemented",
            file=sys.stderr,
        )
        return 2
    import logging

    from maestro_dev.console.server import local_console

    logging.getLogger("moto").setLevel(logging.CRITICAL)  # its ASL interpreter logs every error
    server = local_console(Path(args.scenarios), Path(args.archive), args.port)
    print(f"maestro console: open {server.url}", file=out)
    print("  (127.0.0.1 only; the token is new each run. Ctrl-C stops it.)", file=out)
    out.flush()
    server.serve_forever()
    return 0


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from maestro.adapters.webhook_auth import twilio_signature
    from maestro_dev.local import server as local_server
    from maestro_dev.local.events import sms_params, twilio_sid
    from maestro_dev.local.world import MARIA

    stack, srv = local_server.start(args.port, args.speed, args.step, feed=out)
    sid = twilio_sid("SM", "curl")
    params = sms_params(sid, MARIA.phone, "the kitchen sink is leaking")
    signature = twilio_signature(stack.twilio_token, f"{srv.url}/twilio/sms", params)
    form = " ".join(f"--data-urlencode {k}={v!r}" for k, v in params.items())
    print(
        f"maestro serve: the embedded stack on {srv.url} "
        f"(brain: {stack.pipeline.deps.models.describe()})",
        file=out,
    )
    print(f"  {_where_texts_go(stack)}", file=out)
    # A secret it was given is named by where it came from, never printed.
    print(f"  Twilio auth token it validates with: {_twilio_token_source(stack)}", file=out)
    print(
        f"  operator token for /local/ (header {TOKEN_HEADER}), new each run: {srv.token}\n"
        f"    {_publish_operator_token(srv)}",
        file=out,
    )
    print(
        f"  {_when_a_text_runs(stack, args.speed)}; step mode {'on' if args.step else 'off'}",
        file=out,
    )
    print("  a signed request (or use `maestro send`):", file=out)
    print(f"  curl -s {srv.url}/twilio/sms -H 'X-Twilio-Signature: {signature}' {form}", file=out)
    print("each package is printed below as it starts, pauses and ends:", file=out)
    out.flush()
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        remove_token(srv.port, srv.token)
        stack.__exit__(None, None, None)
    return 0


def _where_texts_go(stack: LocalStack) -> str:
    if stack.messenger_kind == "twilio":
        return (
            "texts it sends go through the twilio SDK to a loopback Twilio on "
            f"{stack.twilio_server.url} (no SMS leaves this machine; `maestro ledger` shows "
            "each as Twilio reports it)"
        )
    return "texts it sends are recorded in its messages table, not sent"


def _when_a_text_runs(stack: LocalStack, speed: float) -> str:
    """When a text sent now is processed, in real seconds, at this speed."""
    window = f"idle window {stack.idle} s of virtual time at {speed:g}x"
    if speed <= 0:
        return f"{window}: the clock stands still, so no text is processed until time moves"
    return (
        f"{window}: a text is processed about {stack.idle / speed:.0f} s after a "
        f"conversation's last one (an urgent one after {stack.urgent_idle / speed:.0f} s)"
    )


def _twilio_token_source(stack: LocalStack) -> str:
    from maestro_dev.local.stack import DEFAULT_TWILIO_TOKEN

    if stack.twilio_token == DEFAULT_TWILIO_TOKEN:
        return f"the local default, {DEFAULT_TWILIO_TOKEN} (set TWILIO_AUTH_TOKEN for another)"
    return "the one in TWILIO_AUTH_TOKEN (not shown)"


def _publish_operator_token(srv: LocalServer) -> str:
    """Write the run's token where the commands find it; what to tell the operator."""
    try:
        path = write_token(srv.port, srv.token)
    except OSError as error:
        return (
            f"not written to {token_path(srv.port)} ({error.strerror}): give it to "
            f"`maestro executions`, `step` and `ledger` with --token or ${TOKEN_ENV}"
        )
    return f"written to {path} (yours alone): `maestro executions`, `step` and `ledger` read it"


def cmd_send(args: argparse.Namespace, out: TextIO) -> int:
    from maestro.adapters.webhook_auth import twilio_signature
    from maestro_dev.local.events import sms_params

    sid = "SM" + uuid.uuid4().hex  # a new message each time, in Twilio's format
    params = sms_params(sid, args.sender, args.text)  # of the embedded stack's account
    url = args.url.rstrip("/") + "/twilio/sms"
    headers = {
        "X-Twilio-Signature": twilio_signature(_token(), url, params),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    status, body = http("POST", url, urlencode(list(params.items())).encode(), headers)
    print(f"{status} {sid} {body}", file=out)
    return 0 if status == 200 else 1


def cmd_executions(args: argparse.Namespace, out: TextIO) -> int:
    cloud = cloud_target(args)
    if cloud is not None:
        for e in cloud.executions(args.limit):
            gate = f"  paused: {e.paused_at}  {console_url(e.arn)}" if e.paused_at else ""
            print(f"{e.name}  {e.status}  {e.started}{gate}", file=out)
        return 0
    status, body = local_call(args, "GET", "/local/executions")
    if status != 200:
        print(f"{status} {body}", file=out)
        return 1
    for e in json.loads(body):
        gate = f"  paused: {e['paused_at']}" if e["paused_at"] else ""
        print(f"{e['name']}  {e['status']}{gate}", file=out)
    return 0


def cmd_ledger(args: argparse.Namespace, out: TextIO) -> int:
    cloud = cloud_target(args)
    if cloud is not None:
        rows = [r.model_dump(mode="json") for r in cloud.ledger(args.package, args.wo)]
    else:
        query = urlencode({k: v for k, v in (("package", args.package), ("wo", args.wo)) if v})
        status, body = local_call(args, "GET", "/local/ledger" + (f"?{query}" if query else ""))
        if status != 200:
            print(f"{status} {body}", file=out)
            return 1
        rows = json.loads(body)
    read_rows = [LedgerRow.model_validate(r) for r in rows]
    if args.shame:  # the Shame that stands: a missing_event row its late event resolved is not
        read_rows = [r for r in read_rows if r.standing_shame]
    for row in read_rows:
        if args.json:
            print(row.model_dump_json(), file=out)
            continue
        read = f" [{row.provenance}]" if row.provenance else ""
        print(
            f"{row.mark:<23} {row.event_type:<17} {row.package_id} "
            f"{row.wo_id or '-'} {row.subject_id}{read}: {row.detail}",
            file=out,
        )
    if not args.json:
        evidence = sum(r.verdict == "evidence" for r in read_rows)
        shame = sum(r.standing_shame for r in read_rows)
        resolved = sum(r.resolution is not None for r in read_rows)
        late = f" ({resolved} more resolved by a late event)" if resolved else ""
        print(f"{evidence} evidence, {shame} shame{late}", file=out)
    return 0


def cmd_step(args: argparse.Namespace, out: TextIO) -> int:
    cloud = cloud_target(args)
    if cloud is not None:
        released, what = cloud.step(args.execution)
        print(what, file=out)
        return 0 if released else 1
    payload = json.dumps({"execution": args.execution}).encode()
    status, body = local_call(args, "POST", "/local/step", payload)
    print(body, file=out)
    return 0 if status == 200 else 1


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = args.handler
    result: int = handler(args, out or sys.stdout)
    return result


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
