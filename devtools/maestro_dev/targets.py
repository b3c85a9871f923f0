"""Where an operator command goes: a running ``maestro serve`` (``--url``, the default) or a
deployed stack (``--stack`` / ``--env``).

The ``maestro`` command (``maestro_dev.cli``) and the commands it hosts (``maestro wo``,
``maestro directory``, ``maestro directory erase``) all import these from here, so none of them
imports the CLI back.
"""

from __future__ import annotations

import argparse
import urllib.error
import urllib.request

from maestro.stack_outputs import stack_for_env
from maestro_dev.cloud import CloudStack, open_stack
from maestro_dev.local.operator_access import TOKEN_ENV, TOKEN_HEADER, token_for

__all__ = ["DEFAULT_URL", "add_target", "cloud_target", "http", "local_call"]

DEFAULT_URL = "http://127.0.0.1:8787"


def add_target(parser: argparse.ArgumentParser) -> None:
    """A running `maestro serve` (--url, the default) or a deployed stack (--stack / --env)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", default=None, help=f"a `maestro serve` (default {DEFAULT_URL})")
    where.add_argument("--stack", help="a deployed stack by name, e.g. maestro-dev")
    where.add_argument("--env", help="a deployed stack by environment: --env dev is maestro-dev")
    parser.add_argument("--region", help="the stack's region (default: boto3's, e.g. AWS_REGION)")
    parser.add_argument(
        "--token",
        help=f"`maestro serve`'s operator token (default: ${TOKEN_ENV}, else the one serve wrote "
        "to ~/.maestro/serve-PORT.token for the URL's port)",
    )


def cloud_target(args: argparse.Namespace) -> CloudStack | None:
    """The deployed stack the arguments name, or None for the local server."""
    name = args.stack or (stack_for_env(args.env) if args.env else None)
    if name is None:
        return None
    return open_stack(name, args.region)


def local_call(
    args: argparse.Namespace, method: str, path: str, body: bytes | None = None
) -> tuple[int, str]:
    """A call to a `maestro serve` operator route, with the run's token."""
    url = (args.url or DEFAULT_URL).rstrip("/")
    headers = {"Content-Type": "application/json"} if body is not None else {}
    token = token_for(url, args.token)
    if token:
        headers[TOKEN_HEADER] = token
    return http(method, url + path, body, headers)


def http(
    method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    """(status, body) of one request; an HTTP error's status and body are an answer too."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
