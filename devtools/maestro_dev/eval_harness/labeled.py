"""``maestro eval labeled``: the labeled sets of ``evals/labeled/`` through the real stages.

Each set is read, each item run through the stages that decide it in production, and the
metrics of ``maestro_dev.eval_harness.metrics`` printed per set, with a reliability diagram and a
risk-coverage curve written as PNG (``--out``; by default ``evals/reports/labeled/<brain>/``,
with ``metrics.json`` and one ``<set>_items.jsonl`` of per-item predictions to read the misses).

- **binding**, **pivots**, **numbers**: the message becomes a one-message package from a party
  of the item's role (tenant by default) whose open contexts are the item's; the brain's
  samples are drawn adaptively (``maestro.brain.sample_drawing.consult``,
  ``ConsensusPolicy().plan()``, contested when the item lists several work orders) on the
  bounded window (``build_window``), aggregated (``consensus.aggregate``) and disposed
  (``dispose.dispose``). The pre-check is not run: these sets grade the binding, not triage.
  The **prediction** is read off the disposal's queue: a queued escalation is ``"escalate"``
  (``"fallback"`` when the samples gave no quorum and a person is asked instead); else the
  first queued action that commits to a target gives the binding (``"new"`` for a create, else
  the open context it targets); with none, a queued clarify is ``"ambiguous"``, anything else
  ``"none"``. Its **confidence** is the consensus share behind it: the vote share of the
  verdict queued (the decision's recorded confidence); for ``"ambiguous"``, 1 − the largest
  share any binding reading got (how much of the vote no single binding held). A prediction
  is **correct** when it equals the label and, if the item lists ``lanes``, the bound action's
  lane is one of them (a number taken for a rating binds the right work order with the wrong
  lane).
- **escalation**: the keyword-free emergencies and their hard negatives go through the
  pre-check (``maestro.brain.precheck.precheck``): the safety floor first, then the model's
  triage (``ModelTriage.precheck``) as its seam when a model is configured. The prediction is
  "raised" (route ``escalate``) or not, its confidence the pre-check's confidence in its route,
  correct when raised exactly for the emergencies. For this binary question the top-label
  Brier score printed equals the Brier score of P(escalate).
- **spanish**: Spanish emergencies (gas, CO, fire and smoke, sparks, flooding, no heat in the
  cold) and everyday Spanish look-alikes, run exactly as **escalation** is (#20).

Brains: ``offline`` (no model: the offline brain's rules, the safety floor alone),
``anthropic`` (``ANTHROPIC_API_KEY`` required; model ids from ``MAESTRO_CHEAP_MODEL_ID`` and
``MAESTRO_STRONG_MODEL_ID`` when set) and ``scripted``. A scripted run replays an item's
``recorded`` answers when it carries them; an item without them is answered by a stand-in that
returns the item's own label. Such a run checks the plumbing only, and its output says so: it
measures no model.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field, model_validator

from maestro.brain.model_port import LanguageModel, ModelRequest
from maestro.brain.precheck import precheck
from maestro.brain.sample_drawing import consult
from maestro.brain.stage_models import Models, models_for
from maestro.domain.actions import Action, CreateWo, Escalate, Lane, ManageExisting, is_new_ref
from maestro.domain.consensus import ConsensusPolicy, ConsensusResult
from maestro.domain.dispose import Disposal, dispose
from maestro.domain.memory import BrainRequest, build_window
from maestro.domain.models import (
    Awaiting,
    ContextKind,
    FlushTrigger,
    Message,
    OpenContext,
    Package,
    Party,
    PartyRole,
    Route,
)
from maestro_dev.eval_harness.metrics import (
    Rate,
    aurc,
    binding_precision,
    binding_recall,
    brier_score,
    escalation_recall,
    expected_calibration_error,
    false_raise_rate,
    is_binding,
    reliability_bins,
    risk_coverage_curve,
)
from maestro_dev.scripted import Scripted, ScriptedModel

__all__ = ["ESCALATION_SETS", "LABELED_DIR", "SETS", "add_parser", "run"]

ROOT = Path(__file__).resolve().parents[3]
LABELED_DIR = ROOT / "evals" / "labeled"
REPORTS_DIR = ROOT / "evals" / "reports" / "labeled"

RoutingSet = Literal["binding", "pivots", "numbers"]
SETS: dict[str, tuple[str, ...]] = {
    "binding": ("binding.jsonl",),
    "pivots": ("pivots.jsonl",),
    "numbers": ("embedded_numbers.jsonl",),
    "escalation": ("keyword_free_emergencies.jsonl", "keyword_free_non_emergencies.jsonl"),
    "spanish": ("spanish_emergencies.jsonl",),
}
ESCALATION_SETS = frozenset({"escalation", "spanish"})
"""The sets whose question is "raise or not" (run through the pre-check), not a binding."""
BRAINS = ("offline", "anthropic", "scripted")
N_BINS = 10

T0 = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)
PHONES = {"tenant": "+14155550100", "vendor": "+14155550199", "pm": "+14155550177"}

SCRIPTED_WARNING = (
    "SCRIPTED RUN: A PLUMBING CHECK, NOT A MEASUREMENT. Items without recorded answers were\n"
    "answered by a stand-in that returns each item's own label; no model was called. The\n"
    "figures below say the stages and metrics are wired, nothing about any model."
)


# --- the items -----------------------------------------------------------------------------------


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ContextSpec(_Item):
    """One open context of the sender, as the item's author wrote it."""

    id: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=200)
    kind: ContextKind = ContextKind.WORK_ORDER
    awaiting: Awaiting = "nothing"
    rating_requested: bool = False
    age_hours: float = Field(default=2.0, ge=0.0)

    @model_validator(mode="after")
    def _rating_awaits_a_rating(self) -> ContextSpec:
        if self.rating_requested and self.awaiting != "rating":
            raise ValueError(f"{self.id}: a rating request awaits a rating")
        return self


class RoutingItem(_Item):
    """A message and the sender's open contexts → the correct binding."""

    text: str = Field(min_length=1)
    contexts: tuple[ContextSpec, ...] = ()
    sender: Literal["tenant", "vendor", "pm"] = "tenant"
    label: str = Field(description='A context id, "new" or "ambiguous"')
    lanes: tuple[Lane, ...] | None = Field(
        default=None, description="The lanes the bound action may have (any when absent)"
    )
    note: str = ""
    recorded: tuple[dict[str, Any], ...] | None = Field(
        default=None, description="Recorded propose_actions answers, one per sample, in order"
    )

    @model_validator(mode="after")
    def _label_is_possible(self) -> RoutingItem:
        ids = [c.id for c in self.contexts]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate context ids: {ids}")
        if self.label not in {*ids, "new", "ambiguous"}:
            raise ValueError(f"label {self.label!r} is none of {ids}, 'new', 'ambiguous'")
        if self.lanes is not None and self.label == "ambiguous":
            raise ValueError("an 'ambiguous' label has no lane")
        return self


class EscalationItem(_Item):
    """A text and whether it is an emergency (``category`` is "none" when it is not)."""

    text: str = Field(min_length=1)
    category: str = Field(min_length=1)
    kind: str | None = None
    note: str | None = None
    recorded: dict[str, Any] | None = Field(default=None, description="A recorded triage answer")

    @property
    def emergency(self) -> bool:
        return self.category != "none"


def load(path: Path, model: type[BaseModel]) -> list[Any]:
    """The items of one JSONL file, validated; an invalid line names its file and number."""
    items: list[Any] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(model.model_validate_json(line))
        except ValueError as error:
            raise ValueError(f"{path.name}:{number}: {error}") from error
    return items


def load_set(name: str, directory: Path = LABELED_DIR) -> list[Any]:
    model: type[BaseModel] = EscalationItem if name in ESCALATION_SETS else RoutingItem
    return [item for file in SETS[name] for item in load(directory / file, model)]


def spread(items: Sequence[Any], limit: int | None) -> list[Any]:
    """``limit`` items taken evenly across the set (its order kept), or all of them."""
    if limit is None or limit >= len(items):
        return list(items)
    return [items[i * len(items) // limit] for i in range(limit)]


# --- one item through the stages -----------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What the system did with one item, and how it is graded."""

    text: str
    label: str
    predicted: str
    lane: str | None
    confidence: float
    correct: bool
    detail: str


def _package(text: str, phone: str, number: int) -> Package:
    conversation = f"labeled-{number}"
    return Package(
        package_id=f"pkg-labeled-{number}",
        conversation_id=conversation,
        flush_number=1,
        trigger=FlushTrigger.IDLE_TIMEOUT,
        sender_phone=phone,
        messages=(
            Message(
                message_id=f"SMlabeled{number:05d}",
                conversation_id=conversation,
                from_phone=phone,
                body=text,
                received_at=T0 - timedelta(seconds=1),
                seq=1,
            ),
        ),
        flushed_at=T0,
    )


def _contexts(item: RoutingItem) -> tuple[OpenContext, ...]:
    # A PM's contexts are the work orders of the properties they manage, as the lease step
    # marks them (``relation="pm"``); a tenant's or vendor's are their own.
    relation: Literal["tenant", "vendor", "pm"] = item.sender
    return tuple(
        OpenContext(
            context_id=c.id,
            kind=c.kind,
            description=c.description,
            opened_at=T0 - timedelta(hours=c.age_hours) - timedelta(days=1),
            last_activity_at=T0 - timedelta(hours=c.age_hours),
            awaiting=c.awaiting,
            rating_requested=c.rating_requested,
            wo_id=c.id if c.kind is ContextKind.WORK_ORDER else None,
            relation=relation,
        )
        for c in item.contexts
    )


def _binding_of(action: Action, owned: set[str]) -> str | None:
    """The target an action commits to: "new" for a create, an owned context id, or None."""
    if isinstance(action, CreateWo):
        return "new"
    if isinstance(action, ManageExisting):
        ids = [i for i in action.params.wo_ids if i in owned]
        return ids[0] if len(ids) == 1 else None
    target = action.target_wo_id
    if target is None:
        return None
    if is_new_ref(target):
        return "new"
    return target if target in owned else None


def read_disposal(
    disposal: Disposal, consensus: ConsensusResult, owned: set[str]
) -> tuple[str, str | None, float]:
    """(predicted binding, its lane, its confidence) from the queue (see the module doc)."""
    confidence = {d.decision_id: d.confidence for d in disposal.decisions}
    queue = disposal.actions
    for queued in queue:
        action = queued.action
        if isinstance(action, Escalate):
            # The brain gave nothing usable (no quorum): a person looks at it. Not a binding.
            kind = "fallback" if action.params.reason == "fallback" else "escalate"
            return kind, Lane.ESCALATE.value, confidence[queued.decision_id]
    for queued in queue:
        bound = _binding_of(queued.action, owned)
        if bound is not None:
            return bound, str(queued.action.lane), confidence[queued.decision_id]
    if any(q.action.lane == Lane.CLARIFY for q in queue):
        held = max(
            (v.share for v in consensus.verdicts if _binding_of(v.action, owned) is not None),
            default=0.0,
        )
        return "ambiguous", Lane.CLARIFY.value, 1.0 - held
    first = queue[0] if queue else None
    if first is None:
        return "none", None, 0.0
    return "none", str(first.action.lane), confidence[first.decision_id]


def run_routing_item(item: RoutingItem, models: Models, number: int) -> Outcome:
    role = item.sender
    sender = Party(party_id=f"{role}-labeled", role=PartyRole(role), phone=PHONES[role])
    package = _package(item.text, sender.phone, number)
    contexts = _contexts(item)
    policy = ConsensusPolicy()
    request = BrainRequest(
        package=package,
        sender_role=role,
        contexts=contexts,
        window=build_window(package, (), (), contexts, role),
    )
    _, consensus = consult(models.brain, request, policy)
    disposal = dispose(package, sender, contexts, consensus)
    predicted, lane, confidence = read_disposal(
        disposal, consensus, {c.context_id for c in contexts}
    )
    lane_ok = item.lanes is None or not is_binding(item.label) or lane in item.lanes
    votes = ", ".join(f"{k} {n}/{consensus.k}" for k, n in consensus.votes.items())
    return Outcome(
        text=item.text,
        label=item.label,
        predicted=predicted,
        lane=lane,
        confidence=round(confidence, 6),
        correct=predicted == item.label and lane_ok,
        detail=f"{consensus.status}: {votes}",
    )


def run_escalation_item(item: EscalationItem, models: Models, number: int) -> Outcome:
    package = _package(item.text, PHONES["tenant"], number)
    seam = models.triage.precheck if models.triage is not None else None
    result = precheck(package, seam)
    raised = result.route is Route.ESCALATE
    return Outcome(
        text=item.text,
        label="escalate" if item.emergency else "no escalation",
        predicted="escalate" if raised else "no escalation",
        lane=result.route.value,
        confidence=round(result.confidence, 6),
        correct=raised == item.emergency,
        detail=f"{result.source}{' (fallback)' if result.fallback else ''}: {result.evidence}"[
            :200
        ],
    )


# --- the brains ----------------------------------------------------------------------------------


def _stand_in_plan(item: RoutingItem) -> dict[str, Any]:
    """The stand-in's answer: the item's own label, as a propose_actions input."""
    if item.label == "new":
        action: dict[str, Any] = {
            "lane": "create_wo",
            "params": {"summary": (item.text + " (request)")[:200]},
        }
    elif item.label == "ambiguous":
        action = {
            "lane": "clarify",
            "params": {
                "question": "Which one do you mean?",
                "candidate_ids": [c.id for c in item.contexts],
            },
        }
    else:
        lane = item.lanes[0] if item.lanes else Lane.RELAY_TO_OPEN_WO
        params: dict[Lane, dict[str, Any]] = {
            Lane.SCHEDULE_VISIT: {"availability": item.text[:300]},
            Lane.RECORD_RATING: {"stars": next((int(c) for c in item.text if c in "12345"), 5)},
            Lane.RELAY_TO_VENDOR: {"message": item.text[:1000]},
            Lane.CONTINUE_WITH_ASSISTANT: {},
            Lane.MANAGE_EXISTING: {"operation": "list", "wo_ids": [item.label]},
        }
        action = {
            "lane": lane.value,
            "target_wo_id": item.label,
            "params": params.get(lane, {"note": item.text[:1000]}),
        }
    return {"actions": [{**action, "confidence": 0.9, "why": "scripted stand-in: the label"}]}


def _stand_in_triage(item: EscalationItem) -> dict[str, Any]:
    return {
        "route": "escalate" if item.emergency else "reasoning",
        "severity": "emergency" if item.emergency else "none",
        "confidence": 0.9,
        "evidence": "scripted stand-in: the label",
    }


def scripted_models(item: RoutingItem | EscalationItem) -> tuple[Models, bool]:
    """A scripted model for one item: its recorded answers (True), else the stand-in (False)."""
    if isinstance(item, RoutingItem) and item.recorded is not None:
        return models_for(ScriptedModel({"reasoning": list(item.recorded)})), True
    if isinstance(item, EscalationItem) and item.recorded is not None:
        return models_for(ScriptedModel({"precheck": [item.recorded]})), True
    answer: Scripted = (
        _stand_in_plan(item) if isinstance(item, RoutingItem) else _stand_in_triage(item)
    )

    def responder(request: ModelRequest) -> Scripted | None:
        return answer if request.purpose in ("reasoning", "precheck", "probe") else None

    return models_for(ScriptedModel(responder=responder, name="scripted-stand-in")), False


def anthropic_model() -> LanguageModel | None:
    key = os.environ.get("ANTHROPIC_API_KEY", "")
    if not key:
        return None
    from maestro.adapters.anthropic_model import (
        DEFAULT_CHEAP_MODEL,
        DEFAULT_STRONG_MODEL,
        AnthropicModel,
    )

    return AnthropicModel(
        key,
        cheap=os.environ.get("MAESTRO_CHEAP_MODEL_ID") or DEFAULT_CHEAP_MODEL,
        strong=os.environ.get("MAESTRO_STRONG_MODEL_ID") or DEFAULT_STRONG_MODEL,
    )


# --- one set -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SetReport:
    name: str
    files: tuple[str, ...]
    items: int
    brain: str
    replayed: int
    stand_in: int
    accuracy: Rate
    ece: float
    brier: float
    aurc: float | None
    rates: dict[str, Rate]
    plots: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["accuracy"] = _rate_json(self.accuracy)
        data["rates"] = {k: _rate_json(v) for k, v in self.rates.items()}
        return data


def _rate_json(rate: Rate) -> dict[str, Any]:
    return {"numerator": rate.numerator, "denominator": rate.denominator, "value": rate.value}


def run_set(
    name: str,
    items: Sequence[Any],
    brain: str,
    out_dir: Path,
    models: Models | None,
) -> tuple[SetReport, list[Outcome]]:
    """Every item through its stages, then the metrics and the two plots."""
    from maestro_dev.eval_harness.plots import reliability_diagram, risk_coverage_plot

    outcomes: list[Outcome] = []
    replayed = stand_in = 0
    for number, item in enumerate(items):
        if models is None:
            item_models, recorded = scripted_models(item)
            replayed += recorded
            stand_in += not recorded
        else:
            item_models = models
        runner: Callable[[Any, Models, int], Outcome] = (
            run_escalation_item if name in ESCALATION_SETS else run_routing_item
        )
        outcomes.append(runner(item, item_models, number))

    confidences = [o.confidence for o in outcomes]
    correct = [o.correct for o in outcomes]
    errors = [0 if c else 1 for c in correct]
    ece = expected_calibration_error(confidences, correct, N_BINS)
    area = aurc(confidences, errors) if len(outcomes) >= 2 else None
    if name in ESCALATION_SETS:
        raised = [o.predicted == "escalate" for o in outcomes]
        emergency = [o.label == "escalate" for o in outcomes]
        rates = {
            "escalation recall": escalation_recall(raised, emergency),
            "false-raise rate": false_raise_rate(raised, emergency),
        }
    else:
        predicted, gold = [o.predicted for o in outcomes], [o.label for o in outcomes]
        rates = {
            "binding precision": binding_precision(predicted, gold),
            "binding recall": binding_recall(predicted, gold),
        }
    title = f"{name} · {brain} · {len(outcomes)} items"
    if brain == "scripted":  # the plots travel alone (the HTML report embeds them): say it there
        title = f"{name} · scripted · PLUMBING CHECK, NOT A MEASUREMENT"
    plots = (
        reliability_diagram(
            reliability_bins(confidences, correct, N_BINS),
            out_dir / f"{name}_reliability.png",
            title=title,
            ece=ece,
            confidence="the pre-check's" if name in ESCALATION_SETS else "consensus share",
        ),
        risk_coverage_plot(
            risk_coverage_curve(confidences, errors),
            out_dir / f"{name}_risk_coverage.png",
            title=title,
            aurc=area,
        ),
    )
    report = SetReport(
        name=name,
        files=SETS[name],
        items=len(outcomes),
        brain=brain,
        replayed=replayed,
        stand_in=stand_in,
        accuracy=Rate(sum(correct), len(correct)),
        ece=ece,
        brier=brier_score(confidences, correct),
        aurc=area,
        rates=rates,
        plots=tuple(str(p) for p in plots),
    )
    return report, outcomes


def _kind(outcome: Outcome) -> str:
    """How an item went, in words: right, or which kind of wrong."""
    if outcome.correct:
        return "right"
    if outcome.label == "escalate":
        return "missed emergency"
    if outcome.predicted == "escalate" and outcome.label == "no escalation":
        return "false raise"
    if outcome.predicted == outcome.label:
        return "wrong lane"
    if is_binding(outcome.predicted):
        return "false bind"
    if outcome.predicted == "ambiguous":
        return "asked, needlessly"
    return f"{outcome.predicted} instead of a binding"


def _print_set(report: SetReport, outcomes: Sequence[Outcome], out: TextIO) -> None:
    print(f"\n== {report.name} ({', '.join(report.files)}): {report.items} items ==", file=out)
    if report.replayed or report.stand_in:
        print(
            f"  scripted: {report.replayed} replayed recorded answers, "
            f"{report.stand_in} answered by the label stand-in",
            file=out,
        )
    print(f"  accuracy: {report.accuracy}", file=out)
    print(f"  ECE: {report.ece:.4f}", file=out)
    print(f"  Brier: {report.brier:.4f}", file=out)
    print(f"  AURC: {'n/a (fewer than 2 items)' if report.aurc is None else f'{report.aurc:.4f}'}",
          file=out)  # fmt: skip
    for metric, rate in report.rates.items():
        print(f"  {metric}: {rate}", file=out)
    kinds = Counter(_kind(o) for o in outcomes)
    print("  outcomes: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())), file=out)
    print(f"  plots: {', '.join(report.plots)}", file=out)


# --- the command ---------------------------------------------------------------------------------


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """``labeled`` under ``maestro eval``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "labeled",
        help="the labeled sets through the real stages: ECE, Brier, AURC, recall, precision",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--brain", choices=BRAINS, default="offline")
    parser.add_argument(
        "--out", type=Path, default=None, help="where the plots go (default evals/reports/...)"
    )
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        choices=sorted(SETS),
        help="run only this set (repeatable; default: every set)",
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="at most N items per set, taken evenly across it"
    )
    parser.add_argument("--dir", type=Path, default=LABELED_DIR, help="the labeled sets' folder")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace, out: TextIO) -> int:
    brain: str = args.brain
    if args.limit is not None and args.limit < 1:
        print("--limit must be at least 1", file=out)
        return 2
    models: Models | None
    if brain == "offline":
        models = models_for(None)
        described = models.describe()
    elif brain == "anthropic":
        model = anthropic_model()
        if model is None:
            print(
                "maestro eval labeled --brain anthropic: ANTHROPIC_API_KEY is not set, so no "
                "model can be measured. Set it (export ANTHROPIC_API_KEY=sk-ant-...) or run "
                "--brain offline.",
                file=out,
            )
            return 2
        models = models_for(model)
        described = models.describe()
    else:
        models = None
        described = "scripted model (recorded answers, else a stand-in returning the label)"
    out_dir: Path = args.out or REPORTS_DIR / brain
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"maestro eval labeled: brain = {described}", file=out)
    if brain == "scripted":
        print(SCRIPTED_WARNING, file=out)
    print(
        "  confidence = the consensus share behind each answer (escalation: the pre-check's); "
        f"ECE over {N_BINS} equal-width bins; AURC normalised by 1 - 1/n",
        file=out,
    )
    reports: list[SetReport] = []
    for name in args.sets or list(SETS):
        items = spread(load_set(name, args.dir), args.limit)
        report, outcomes = run_set(name, items, brain, out_dir, models)
        reports.append(report)
        with (out_dir / f"{name}_items.jsonl").open("w") as f:
            for outcome in outcomes:
                f.write(json.dumps(asdict(outcome)) + "\n")
        _print_set(report, outcomes, out)
    summary = {
        "brain": brain,
        "described": described,
        "measurement": brain != "scripted",
        "sets": [r.as_json() for r in reports],
    }
    (out_dir / "metrics.json").write_text(json.dumps(summary, indent=2) + "\n")
    if brain == "scripted":
        print(f"\n{SCRIPTED_WARNING}", file=out)
    print(f"\nwritten: {out_dir}/metrics.json and the per-item predictions beside it", file=out)
    return 0
