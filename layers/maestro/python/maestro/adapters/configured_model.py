"""The language model every stage uses, from settings: Anthropic behind its budgets, or none.

Shared by the pipeline's steps and the flusher's severity probe; kept out of
``maestro.pipeline.entry`` so the flusher can build it without importing the pipeline.
"""

from __future__ import annotations

import os
from typing import Any

from maestro.adapters.dynamodb_budget import BudgetCaps, DynamoModelBudget
from maestro.adapters.secrets import SecretsManagerSecrets
from maestro.brain.budgeted import BudgetedModel
from maestro.brain.model_port import LanguageModel
from maestro.observability import logger
from maestro.ports.platform import Clock
from maestro.settings import ModelSettings

__all__ = ["language_model"]


def language_model(
    settings: ModelSettings,
    clock: Clock,
    ddb: Any,
    conversations_table: str,
    model: LanguageModel | None = None,
    *,
    key_from_env: bool = True,
) -> LanguageModel | None:
    """The model every stage uses, behind its budgets: ``model`` when given (the scripted one),
    else Anthropic when a key is configured (the secret in the cloud, ``ANTHROPIC_API_KEY``
    locally), else None: the deterministic paths, named as the offline brain."""
    if model is None:
        key = (
            SecretsManagerSecrets().get(settings.anthropic_api_key_secret)
            if settings.anthropic_api_key_secret
            else os.environ.get("ANTHROPIC_API_KEY", "")
            if key_from_env
            else ""
        )
        if not key.startswith("sk-ant-"):
            # No key, or the stack's random placeholder not yet replaced: the offline brain.
            if key:
                logger.warning("the Anthropic key secret holds no Anthropic key: running offline")
            return None
        # The SDK is imported only here, when a key says a model will answer: it takes longer
        # to import than boto3 and Powertools together, and the offline brain never needs it.
        from maestro.adapters.anthropic_model import AnthropicModel

        model = AnthropicModel(
            key,
            cheap=settings.cheap_model_id,
            strong=settings.strong_model_id,
            timeout=settings.model_timeout_seconds,
            max_retries=settings.model_max_retries,
        )
    caps = BudgetCaps(
        package_calls=settings.package_model_calls,
        package_tokens=settings.package_model_tokens,
        day_calls=settings.daily_model_calls,
        day_tokens=settings.daily_model_tokens,
        account_day_calls=settings.account_daily_model_calls,
        judgment_day_calls=settings.daily_judgment_calls,
    )
    return BudgetedModel(model, DynamoModelBudget(ddb, conversations_table, caps), clock)
