"""boto3 clients, built once per Lambda container (at first use, not at import)."""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3


@cache
def client(service: str, region: str | None = None) -> Any:
    return boto3.session.Session().client(service, region_name=region)  # type: ignore[call-overload]
