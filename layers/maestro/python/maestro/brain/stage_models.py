"""Which brain answers: every model-backed stage, built from one optional language model.

With a model (Anthropic, or the scripted one), every stage uses it: the severity probe and the
pre-check (cheap tier), the reasoning brain and the manage agent (strong tier), decide()'s
judgments and the assistant's composed reply (cheap; off with ``compose_replies=False``). With
none, every stage takes its deterministic path: the safety floor alone, the offline brain's
rules, decide()'s defaults, the manage lane's own rules, the assistant's fixed texts. Either way the
choice is named in every output (``describe``).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from maestro.brain.budgeted import BudgetedModel
from maestro.brain.compose import ReplyComposer
from maestro.brain.judgments import Judgments, decide_model_for
from maestro.brain.manage_agent import ManageAgent
from maestro.brain.model_port import LanguageModel
from maestro.brain.offline import OfflineBrain
from maestro.brain.reasoning import ModelBrain
from maestro.brain.triage import ModelTriage
from maestro.ports.brain import Brain

__all__ = ["Models", "models_for"]


@dataclass(frozen=True)
class Models:
    model: LanguageModel | None
    brain: Brain
    triage: ModelTriage | None
    judgments: Judgments
    agent: ManageAgent | None
    composer: ReplyComposer | None = None

    def describe(self) -> str:
        return self.brain.describe()

    def scope(
        self, conversation_id: str, package_id: str | None = None
    ) -> AbstractContextManager[None]:
        """Charge the model calls made inside to this conversation (and package)."""
        if isinstance(self.model, BudgetedModel):
            return self.model.scope(conversation_id, package_id)
        return nullcontext()


def models_for(model: LanguageModel | None, *, compose_replies: bool = True) -> Models:
    if model is None:
        return Models(
            model=None, brain=OfflineBrain(), triage=None, judgments=Judgments(None), agent=None
        )
    return Models(
        model=model,
        brain=ModelBrain(model),
        triage=ModelTriage(model),
        judgments=Judgments(
            decide_model_for(model),
            allowance=model.reserve_judgments if isinstance(model, BudgetedModel) else None,
        ),
        agent=ManageAgent(model),
        composer=ReplyComposer(model) if compose_replies else None,
    )
