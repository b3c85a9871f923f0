"""Budgets around a language model: every call is charged before it is made.

Per package and per conversation (per day), calls and tokens are capped
(:class:`maestro.ports.limits.ModelBudget`). A call over budget is not made: it fails as
``ModelError("budget_exhausted")``, which every stage handles like any other model failure,
with its recorded deterministic default. The scope (which conversation, which package) is set by
the step making the calls, around them. The bounded judgments also take their samples, at once,
from an allowance of their own per conversation per day (:meth:`BudgetedModel.reserve_judgments`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from maestro.brain.model_port import LanguageModel, ModelAnswer, ModelError, ModelRequest, Tier
from maestro.ports.limits import BudgetScope, ModelBudget
from maestro.ports.platform import Clock

__all__ = ["BudgetedModel"]

_SCOPE: ContextVar[BudgetScope | None] = ContextVar("maestro_model_budget_scope", default=None)


class BudgetedModel:
    """:class:`maestro.brain.model_port.LanguageModel` charging each call to the current scope."""

    def __init__(self, model: LanguageModel, budget: ModelBudget, clock: Clock) -> None:
        self._model = model
        self._budget = budget
        self._clock = clock

    def describe(self) -> str:
        return self._model.describe()

    @property
    def concurrent_calls(self) -> bool:
        """As the wrapped model: the budget itself takes concurrent calls (each reserve is one
        atomic charge, and the scope travels with each thread's copied context)."""
        return bool(getattr(self._model, "concurrent_calls", False))

    def model_id(self, tier: Tier) -> str:
        return self._model.model_id(tier)

    @staticmethod
    @contextmanager
    def scope(conversation_id: str, package_id: str | None = None) -> Iterator[None]:
        token = _SCOPE.set(BudgetScope(conversation_id=conversation_id, package_id=package_id))
        try:
            yield
        finally:
            _SCOPE.reset(token)

    def reserve_judgments(self, calls: int) -> bool:
        """Take ``calls`` from the current conversation's judgment allowance for today; False
        (nothing taken) when they do not fit, or when no scope is set (refuse, as :meth:`ask`)."""
        scope = _SCOPE.get()
        if scope is None:
            return False
        return self._budget.reserve_judgments(scope, self._clock.now(), calls)

    def ask(self, request: ModelRequest) -> ModelAnswer:
        scope = _SCOPE.get()
        if scope is None:
            # Unscoped calls are a programming mistake: refuse rather than spend uncounted.
            raise ModelError("budget_exhausted", "no budget scope is set for this call")
        now = self._clock.now()
        if not self._budget.reserve(scope, now):
            raise ModelError("budget_exhausted", f"{request.purpose}: the budget is spent")
        answer = self._model.ask(request)
        self._budget.record_tokens(scope, now, answer.input_tokens + answer.output_tokens)
        return answer
