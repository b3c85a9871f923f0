"""``maestro directory erase PHONE|ID``: erase a person (docs/erase-and-retention.md).

On ``maestro serve`` (``--url``, the default) through its operator route
``POST /local/directory/erase``; on a deployed stack (``--stack`` / ``--env``) with boto3 and
the stack's table outputs. Both run :class:`maestro.adapters.dynamodb_erase.DynamoEraser`.
Exit 0 when the person was erased (or a second run found nothing left), 1 when the id names
nobody or the number is not E.164.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from maestro.adapters.dynamodb_erase import DynamoEraser, EraseReport, NothingToEraseError
from maestro_dev.targets import cloud_target, local_call

ROUTE = "/local/directory/erase"


def add_parser(
    commands: Any,  # argparse's private _SubParsersAction
    target: Callable[[argparse.ArgumentParser], None],
) -> None:
    erase = commands.add_parser(
        "erase",
        help="erase a person: their directory rows, their number, their words (the decision "
        "log keeps its structure)",
    )
    erase.add_argument("who", help="an E.164 number (+15551234567) or a person/party id")
    target(erase)
    erase.set_defaults(handler=cmd_erase)


def erase(client: Any, tables: Mapping[str, str], who: str) -> tuple[int, dict[str, Any]]:
    """(HTTP-like status, answer) of one erase: what the serve route and the cloud path share."""
    try:
        report = DynamoEraser(client, tables).erase(who)
    except NothingToEraseError as error:
        return 404, {"error": str(error)}
    except ValueError as error:
        return 400, {"error": str(error)}
    return 200, report.model_dump(mode="json")


def describe(report: EraseReport) -> str:
    if not report.changed:
        return f"nothing left to erase for {report.subject}"
    ids = ", ".join(report.person_ids) or "an unknown sender"
    deleted = ", ".join(f"{table} {n}" for table, n in report.deleted.items()) or "none"
    redacted = ", ".join(f"{table} {n}" for table, n in report.redacted.items()) or "none"
    return (
        f"erased {report.subject} ({ids}): {report.bodies} text(s) and "
        f"{report.packages} package(s) looked for\n"
        f"  deleted: {deleted}\n  redacted: {redacted}"
    )


def cmd_erase(args: argparse.Namespace, out: TextIO) -> int:
    cloud = cloud_target(args)
    if cloud is not None:
        try:
            tables = cloud.table_names()
        except LookupError as error:  # an older stack without every table's output
            print(f"{error}: nothing erased", file=out)
            return 1
        status, answer = erase(cloud.dynamodb, tables, args.who)
    else:
        payload = json.dumps({"who": args.who}).encode()
        status, body = local_call(args, "POST", ROUTE, payload)
        try:
            answer = json.loads(body)
        except ValueError:
            answer = {"error": body}
    if status != 200:
        print(f"{status} {answer.get('error', answer)}", file=out)
        return 1
    print(describe(EraseReport.model_validate(answer)), file=out)
    return 0
