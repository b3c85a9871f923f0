"""``maestro directory import|export|show``, on ``maestro serve`` (``--url``, the default) or a
deployed stack (``--stack`` / ``--env``, through boto3 and the stack's table outputs).

:func:`add_parser` returns the group's subparsers: another ``maestro directory`` command is one
more ``commands.add_parser(...)`` with its handler.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from maestro.domain.directory import Directory
from maestro.domain.directory_import import ImportPlan, Problem, find
from maestro_dev.directory.files import read_folder, write_folder
from maestro_dev.targets import cloud_target, local_call

__all__ = ["add_parser"]

Target = Callable[[argparse.ArgumentParser], None]


def add_parser(sub: argparse._SubParsersAction, target: Target) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    """``maestro directory …``; ``target`` adds the --url/--stack/--env options every command
    takes. Returns the group's subparsers, for more commands."""
    directory = sub.add_parser(
        "directory", help="the directory: import it from CSV files, export it, show one entry"
    )
    commands: argparse._SubParsersAction = directory.add_subparsers(  # type: ignore[type-arg]
        dest="directory_command", required=True
    )

    load = commands.add_parser(
        "import", help="validate a folder of CSV files, then apply it (docs/directory.md)"
    )
    load.add_argument("folder", type=Path, help="properties.csv, units.csv, people.csv, …")
    load.add_argument(
        "--dry-run", action="store_true", help="print what would change; write nothing"
    )
    load.add_argument(
        "--prune", action="store_true", help="also remove what the files no longer list"
    )
    target(load)
    load.set_defaults(handler=cmd_import)

    export = commands.add_parser("export", help="write the stored directory as the import files")
    export.add_argument("folder", type=Path)
    target(export)
    export.set_defaults(handler=cmd_export)

    show = commands.add_parser("show", help="the entries a phone (E.164) or an id names")
    show.add_argument("key", help="a phone such as +14155550100, or a person/vendor/unit id")
    target(show)
    show.set_defaults(handler=cmd_show)
    return commands


def _print_problems(problems: tuple[Problem, ...] | list[Problem], out: TextIO) -> None:
    for problem in problems:
        print(problem.line(), file=out)


def _apply(
    args: argparse.Namespace, directory: Directory, *, prune: bool, dry_run: bool
) -> tuple[ImportPlan | None, list[Problem], str]:
    """(the plan, or None and the refusal's problems and message)."""
    cloud = cloud_target(args)
    if cloud is not None:
        from maestro.domain.directory_import import check_directory
        from maestro_dev.directory.apply import apply_directory

        problems = check_directory(directory)
        if problems:
            return None, problems, ""
        store, parties = cloud.directory_stores()
        return apply_directory(directory, store, parties, prune=prune, dry_run=dry_run), [], ""
    payload = {
        "directory": directory.model_dump(mode="json"),
        "prune": prune,
        "dry_run": dry_run,
    }
    status, body = local_call(args, "POST", "/local/directory/import", json.dumps(payload).encode())
    if status == 200:
        return ImportPlan.model_validate_json(body), [], ""
    try:
        answer = json.loads(body)
        problems = [Problem.model_validate(p) for p in answer.get("errors", [])]
    except (ValueError, AttributeError):
        problems = []
    return None, problems, f"{status} {body if not problems else ''}".strip()


def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    validated = read_folder(args.folder)
    _print_problems(validated.warnings, out)
    if validated.directory is None:
        _print_problems(validated.errors, out)
        print(f"{len(validated.errors)} errors: nothing was written", file=out)
        return 1
    plan, problems, refusal = _apply(
        args, validated.directory, prune=args.prune, dry_run=args.dry_run
    )
    if plan is None:
        _print_problems(problems, out)
        print(f"refused ({refusal or f'{len(problems)} errors'}): nothing was written", file=out)
        return 1
    if plan.conflicts:
        _print_problems(plan.conflicts, out)
        print(
            f"{len(plan.conflicts)} errors against the stored directory: nothing was written",
            file=out,
        )
        return 1
    absent = [change.line() for change in plan.absent]
    if args.prune and absent:  # what goes is listed first
        verb = "would remove" if args.dry_run else "removed"
        print(f"--prune: {verb} {len(absent)} entries absent from the files:", file=out)
        print("\n".join(absent), file=out)
    for change in (*plan.added, *plan.changed):
        print(change.line(), file=out)
    if absent and not args.prune:
        print("\n".join(absent), file=out)
    if plan.changes == 0:
        print("0 changes: the directory already holds these files", file=out)
    prefix = "dry run, nothing written: would make " if args.dry_run else ""
    print(prefix + plan.summary(), file=out)
    return 0


def _stored(args: argparse.Namespace) -> Directory | None:
    cloud = cloud_target(args)
    if cloud is not None:
        store, _parties = cloud.directory_stores()
        return store.snapshot()
    status, body = local_call(args, "GET", "/local/directory")
    if status != 200:
        return None
    return Directory.model_validate_json(body)


def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    directory = _stored(args)
    if directory is None:
        print("could not read the directory (is `maestro serve` running?)", file=out)
        return 1
    for path in write_folder(directory, args.folder):
        print(f"wrote {path}", file=out)
    return 0


def cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    directory = _stored(args)
    if directory is None:
        print("could not read the directory (is `maestro serve` running?)", file=out)
        return 1
    found = find(directory, args.key)
    for entity in found:
        print(f"{type(entity).__name__.lower()} {entity.model_dump_json()}", file=out)
    if not found:
        print(f"nothing in the directory is {args.key!r}", file=out)
        return 1
    return 0
