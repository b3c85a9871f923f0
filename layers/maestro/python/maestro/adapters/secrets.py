"""Secrets by name or ARN, fetched at invocation and cached by Powertools."""

from __future__ import annotations

from aws_lambda_powertools.utilities import parameters


class SecretsManagerSecrets:
    """:class:`maestro.ports.platform.Secrets` on AWS Secrets Manager (Powertools caches for 5
    minutes)."""

    def __init__(self, max_age_seconds: int = 300) -> None:
        self._max_age = max_age_seconds

    def get(self, name_or_arn: str) -> str:
        value = parameters.get_secret(name_or_arn, max_age=self._max_age)
        return value if isinstance(value, str) else value.decode()
