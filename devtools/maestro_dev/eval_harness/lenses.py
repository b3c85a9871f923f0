"""Lenses: a checkpoint's ``expect`` graded against what independent reads returned.

Pure: the reads are gathered elsewhere (the decision log, the WO store, the messages as the
messaging surface returns them by SID, evidence and shame rows) into :class:`Reads`, and a
lens only compares. A lens never sees a pipeline's return value, and a lens with nothing to read
fails: an expectation about decisions when no package ran, or about evidence when no evidence
surface exists, is a failure with that reason, never a pass by default.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import Field

from maestro.domain.common import Frozen
from maestro.domain.dispatch import DispatchRun
from maestro.domain.models import WorkOrder
from maestro.domain.records import ActionOutcomeRecord, MaestroDecision, PackageCompletion
from maestro_dev.eval_harness.scenario import DecisionExpect, Expect, MessageExpect, offset

__all__ = [
    "CheckpointGrade",
    "Finding",
    "PackageContents",
    "PackageReads",
    "PendingRead",
    "Reads",
    "SentRecord",
    "grade",
]


class PackageContents(Frozen):
    """What a package held: its trigger (the execution's input) and its messages, read back
    from the conversation buffer, in order."""

    trigger: str
    sender: str = Field(description="The sender's phone")
    texts: tuple[str, ...] = ()
    media: int = 0


class PackageReads(Frozen):
    """One package, as the decision log holds it."""

    package_id: str
    decisions: tuple[MaestroDecision, ...] = ()
    outcomes: tuple[ActionOutcomeRecord, ...] = ()
    completion: PackageCompletion | None = None
    contents: PackageContents | None = Field(default=None, description="None: not read back")


class PendingRead(Frozen):
    """An item out to a party: a question, a hold, or an open dispatch offer."""

    kind: str
    party_id: str
    text: str = ""
    wo_ids: tuple[str, ...] = ()


class SentRecord(Frozen):
    """One outbound message, read back by its SID from the messaging surface."""

    sid: str
    to: str
    body: str
    status: str = ""


class Reads(Frozen):
    """Everything a checkpoint is graded on, each field from an independent read."""

    packages: tuple[PackageReads, ...] = Field(
        default=(), description="The packages the covered turns produced, in start order"
    )
    work_orders: dict[str, WorkOrder] = Field(default_factory=dict)
    seeded_versions: dict[str, int] = Field(
        default_factory=dict, description="Each seeded WO's version when the scenario started"
    )
    created: tuple[str, ...] = Field(
        default=(),
        description="The WOs the scenario's packages created so far, in order ('new:N' keys)",
    )
    dispatch: dict[str, DispatchRun] = Field(
        default_factory=dict, description="The created WOs' dispatch runs (the dispatch store)"
    )
    messages: tuple[SentRecord, ...] = Field(
        default=(), description="Sent by the covered packages, read back by SID"
    )
    evidence: tuple[dict[str, Any], ...] | None = Field(
        default=None, description="Evidence rows for the covered packages; None: no surface"
    )
    shame: tuple[dict[str, Any], ...] | None = Field(
        default=None, description="Shame rows for the covered packages; None: no surface"
    )
    notes: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="Each WO's timeline notes, oldest first"
    )
    interrupted: dict[str, bool] = Field(
        default_factory=dict, description="Each WO's routing state: an emergency interrupted it"
    )
    photos: dict[str, int] = Field(
        default_factory=dict, description="Photos each WO's timeline holds"
    )
    pending: tuple[PendingRead, ...] | None = Field(
        default=None, description="Items out now (pending and dispatch stores); None: not read"
    )
    opted_out: dict[str, bool] = Field(
        default_factory=dict, description="By phone: opted out (the consent store)"
    )


class Finding(Frozen):
    """One expectation and what the reads said about it."""

    expectation: str
    passed: bool
    reason: str
    evidence: str = ""


class CheckpointGrade(Frozen):
    passed: bool
    reason: str
    findings: tuple[Finding, ...]


def has_words(text: str, words: str) -> bool:
    """Whether ``words`` is in ``text`` (any case) as whole words: not inside a longer word or
    number at either end ("WO-1" is not in "WO-198", "leak" not in "leaky"). An edge that is
    not a word character (``[EMERGENCY]``, ``204:``) needs no boundary there."""
    if not words:
        return True
    pattern = re.escape(words)
    if re.match(r"\w", words[0]):
        pattern = r"(?<!\w)" + pattern
    if re.match(r"\w", words[-1]):
        pattern += r"(?!\w)"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def grade(
    expect: Expect,
    reads: Reads,
    phones: Mapping[str, str],
    start: datetime | None = None,
) -> CheckpointGrade:
    """Grade ``expect`` on ``reads``. ``phones`` maps a party id (and ``"pm"``) to a phone;
    ``start`` is the scenario's start (a visit window is given as offsets from it)."""
    findings: list[Finding] = []
    for lens in _LENSES:
        findings.extend(lens(expect, reads, phones))
    findings.extend(_work_order_fields(expect, reads, start))
    if not findings:
        findings.append(Finding(expectation="anything", passed=False, reason="expects nothing"))
    failed = [f for f in findings if not f.passed]
    reason = "; ".join(f"{f.expectation}: {f.reason}" for f in failed) if failed else "all held"
    return CheckpointGrade(passed=not failed, reason=reason[:2000], findings=tuple(findings))


# --- the lenses --------------------------------------------------------------------------------


def _decisions(reads: Reads) -> list[MaestroDecision]:
    return [d for p in reads.packages for d in sorted(p.decisions, key=lambda d: d.index)]


def _queued(reads: Reads) -> list[MaestroDecision]:
    return [d for d in _decisions(reads) if d.disposition == "queued"]


def _nothing_to_read(expectation: str, reads: Reads) -> Finding | None:
    if not reads.packages:
        return Finding(expectation=expectation, passed=False, reason="nothing to read: no package")
    if not _decisions(reads):
        return Finding(
            expectation=expectation, passed=False, reason="nothing to read: no decision recorded"
        )
    return None


def _lane_line(decisions: Iterable[MaestroDecision]) -> str:
    return ", ".join(f"{d.lane.value}({d.target_wo_id or '-'})" for d in decisions) or "(none)"


def _packages(expect: Expect, reads: Reads, _phones: Mapping[str, str]) -> list[Finding]:
    out: list[Finding] = []
    if expect.packages is not None:
        got = len(reads.packages)
        out.append(
            Finding(
                expectation=f"packages = {expect.packages}",
                passed=got == expect.packages,
                reason=f"{got} package(s) ran",
                evidence=", ".join(p.package_id for p in reads.packages),
            )
        )
    if expect.failed_open is not None:
        missing = [p.package_id for p in reads.packages if p.completion is None]
        opened = [
            p.package_id
            for p in reads.packages
            if p.completion is not None and p.completion.completed_by == "fail_open"
        ]
        if not reads.packages or missing:
            reason = "nothing to read: " + (
                f"no completion record for {', '.join(missing)}" if missing else "no package"
            )
            out.append(Finding(expectation="failed_open", passed=False, reason=reason))
        else:
            out.append(
                Finding(
                    expectation=f"failed_open = {expect.failed_open}",
                    passed=bool(opened) == expect.failed_open,
                    reason=f"failed open: {', '.join(opened) or 'none'}",
                )
            )
    return out


def _lanes(expect: Expect, reads: Reads, _phones: Mapping[str, str]) -> list[Finding]:
    if expect.lanes is None and expect.actions is None and not expect.absent_lanes:
        return []
    empty = _nothing_to_read("the action queue", reads)
    if empty is not None:
        return [empty]
    queued = _queued(reads)
    line = _lane_line(queued)
    out: list[Finding] = []
    if expect.lanes is not None:
        got = [d.lane.value for d in queued]
        out.append(
            Finding(
                expectation=f"lanes = {list(expect.lanes)}",
                passed=got == list(expect.lanes),
                reason=f"queued {line}",
            )
        )
    if expect.actions is not None:
        got_pairs = [(d.lane.value, d.target_wo_id) for d in queued]
        want_pairs = [(str(a.get("lane")), a.get("target")) for a in expect.actions]
        out.append(
            Finding(
                expectation="actions = "
                + ", ".join(f"{lane}({target or '-'})" for lane, target in want_pairs),
                passed=got_pairs == want_pairs,
                reason=f"queued {line}",
            )
        )
    if expect.absent_lanes:
        present = sorted({d.lane.value for d in queued} & set(expect.absent_lanes))
        out.append(
            Finding(
                expectation=f"no lane of {list(expect.absent_lanes)}",
                passed=not present,
                reason=f"queued {line}",
            )
        )
    return out


def _matches(
    want: DecisionExpect, decision: MaestroDecision, completions: Mapping[str, str]
) -> bool:
    for name, value in want.model_dump(exclude_none=True).items():
        if name == "route":
            got: Any = completions.get(decision.package_id)
        elif name == "vote_split":
            got = sorted(decision.votes.values(), reverse=True)
            value = list(value)
        else:
            got = getattr(decision, name)
            got = getattr(got, "value", got)
        if got != value:
            return False
    return True


def _describe(want: DecisionExpect) -> str:
    return ", ".join(f"{k}={v}" for k, v in want.model_dump(exclude_none=True).items()) or "any"


def _decision_fields(expect: Expect, reads: Reads, _phones: Mapping[str, str]) -> list[Finding]:
    if not expect.decisions and not expect.no_decision:
        return []
    empty = _nothing_to_read("decisions", reads)
    if empty is not None:
        return [empty]
    decisions = _decisions(reads)
    completions = {p.package_id: p.completion.route for p in reads.packages if p.completion}
    seen = "; ".join(
        f"{d.stage}/{d.disposition.value}/{d.lane.value}({d.target_wo_id or '-'})"
        f"{' abstained' if d.abstained else ''}{' fallback' if d.fallback else ''}"
        f"{' interrupted' if d.interrupted else ''}"
        f"{f' revalidation={d.revalidation}' if d.revalidation else ''}"
        f" relation={d.context_relation} open={d.open_context_count}"
        f" samples={d.valid_samples}/{d.samples} votes={d.votes}"
        for d in decisions
    )
    out: list[Finding] = []
    for want in expect.decisions:
        hit = next((d for d in decisions if _matches(want, d, completions)), None)
        out.append(
            Finding(
                expectation=f"a decision with {_describe(want)}",
                passed=hit is not None,
                reason=f"found {hit.decision_id}" if hit else f"none among: {seen}",
                evidence=hit.reason if hit else "",
            )
        )
    for banned in expect.no_decision:
        hit = next((d for d in decisions if _matches(banned, d, completions)), None)
        out.append(
            Finding(
                expectation=f"no decision with {_describe(banned)}",
                passed=hit is None,
                reason=f"but {hit.decision_id}: {hit.reason}" if hit else "none",
            )
        )
    return out


def _work_orders(expect: Expect, reads: Reads, _phones: Mapping[str, str]) -> list[Finding]:
    out: list[Finding] = []
    for key, want in expect.work_orders.items():
        wo_id = _wo_id(key, reads)
        wo = reads.work_orders.get(wo_id) if wo_id is not None else None
        if wo_id is None or wo is None:
            why = f"only {len(reads.created)} created" if wo_id is None else "no such WO"
            out.append(Finding(expectation=key, passed=False, reason=f"nothing to read: {why}"))
            continue
        run = reads.dispatch.get(wo_id)
        offers = _offers(run)
        state = (
            f"{wo_id} status={wo.status.value} vendor={wo.vendor_id} rating={wo.rating} "
            f"rating_requested={wo.rating_requested} version={wo.version} "
            f"dispatch={run.step if run else None} offers={','.join(offers) or '-'}"
        )
        checks: list[tuple[str, bool]] = []
        if want.status is not None:
            checks.append((f"status={want.status}", wo.status.value == want.status))
        if want.rating is not None:
            checks.append((f"rating={want.rating}", wo.rating == want.rating))
        if want.rating_requested is not None:
            checks.append(
                (
                    f"rating_requested={want.rating_requested}",
                    wo.rating_requested == want.rating_requested,
                )
            )
        if want.vendor is not None:
            vendor = None if want.vendor == "none" else want.vendor
            checks.append((f"vendor={want.vendor}", wo.vendor_id == vendor))
        if want.dispatch is not None:
            checks.append(
                (f"dispatch={want.dispatch}", run is not None and run.step == want.dispatch)
            )
        if want.offers is not None:
            checks.append((f"offers={','.join(want.offers)}", offers == want.offers))
        if want.unchanged is not None:
            seeded = reads.seeded_versions.get(wo_id)
            same = seeded is not None and wo.version == seeded
            checks.append((f"unchanged={want.unchanged}", same == want.unchanged))
        for what, held in checks:
            out.append(Finding(expectation=f"{key} {what}", passed=held, reason=state))
    if expect.new_work_orders is not None:
        created = [o.created_wo_id for p in reads.packages for o in p.outcomes if o.created_wo_id]
        real = [i for i in created if i in reads.work_orders]
        out.append(
            Finding(
                expectation=f"new work orders = {expect.new_work_orders}",
                passed=len(real) == expect.new_work_orders and len(real) == len(created),
                reason=f"created {', '.join(created) or 'none'}"
                + ("" if len(real) == len(created) else " (not all in the WO store)"),
            )
        )
    return out


def _wo_id(key: str, reads: Reads) -> str | None:
    """A WO id as given, or ``new:N``: the Nth work order the scenario created (1-based)."""
    if not key.startswith("new:"):
        return key
    n = int(key.removeprefix("new:"))
    return reads.created[n - 1] if 0 < n <= len(reads.created) else None


def _offers(run: DispatchRun | None) -> tuple[str, ...]:
    return tuple(f"{o.vendor_id}:{o.outcome}" for o in run.offers) if run else ()


def _recipient(to: str, phones: Mapping[str, str]) -> str:
    return phones.get(to, to)


def _message_line(message: SentRecord, names: Mapping[str, str]) -> str:
    return f"to {names.get(message.to, message.to)}: {message.body[:80]}"


def _messages(expect: Expect, reads: Reads, phones: Mapping[str, str]) -> list[Finding]:
    if not expect.messages and not expect.no_message_containing and not expect.no_messages:
        return []
    names = {phone: who for who, phone in phones.items()}
    sent = "; ".join(_message_line(m, names) for m in reads.messages) or "(none)"
    out: list[Finding] = []
    for want in expect.messages:
        out.append(_one_message(want, reads, phones, sent))
    for text in expect.no_message_containing:
        hits = [m for m in reads.messages if has_words(m.body, text)]
        out.append(
            Finding(
                expectation=f"no message containing {text!r}",
                passed=not hits,
                reason=f"but {_message_line(hits[0], names)}" if hits else "none",
            )
        )
    for banned in expect.no_messages:
        phone = _recipient(banned.to, phones)
        hits = [m for m in reads.messages if m.to == phone and has_words(m.body, banned.contains)]
        out.append(
            Finding(
                expectation=f"no message to {banned.to} containing {banned.contains!r}",
                passed=not hits,
                reason=f"but {_message_line(hits[0], names)}" if hits else "none",
            )
        )
    return out


def _one_message(
    want: MessageExpect, reads: Reads, phones: Mapping[str, str], sent: str
) -> Finding:
    phone = _recipient(want.to, phones)
    hits = [m for m in reads.messages if m.to == phone and has_words(m.body, want.contains)]
    what = f"message to {want.to}" + (f" containing {want.contains!r}" if want.contains else "")
    if want.count is None:
        return Finding(
            expectation=what,
            passed=bool(hits),
            reason=f"{len(hits)} found" if hits else f"none among: {sent}",
            evidence=hits[0].body if hits else "",
        )
    return Finding(
        expectation=f"{what} × {want.count}",
        passed=len(hits) == want.count,
        reason=f"{len(hits)} found among: {sent}",
    )


def _truth(expect: Expect, reads: Reads, _phones: Mapping[str, str]) -> list[Finding]:
    out: list[Finding] = []
    if expect.evidence is not None:
        if reads.evidence is None:
            out.append(
                Finding(expectation="evidence", passed=False, reason="nothing to read: no evidence")
            )
        else:
            out.append(
                Finding(
                    expectation=f"evidence present = {expect.evidence}",
                    passed=bool(reads.evidence) == expect.evidence,
                    reason=f"{len(reads.evidence)} evidence row(s)",
                )
            )
    if expect.shame_empty is not None:
        if reads.shame is None:
            out.append(
                Finding(expectation="shame", passed=False, reason="nothing to read: no shame")
            )
        else:
            out.append(
                Finding(
                    expectation=f"shame empty = {expect.shame_empty}",
                    passed=(not reads.shame) == expect.shame_empty,
                    reason=f"{len(reads.shame)} shame row(s)",
                    evidence="; ".join(str(r.get("claim", r))[:120] for r in reads.shame[:3]),
                )
            )
    return out


def _package_contents(expect: Expect, reads: Reads, phones: Mapping[str, str]) -> list[Finding]:
    if expect.package_contents is None:
        return []
    names = {phone: who for who, phone in phones.items()}

    def line(p: PackageReads) -> str:
        c = p.contents
        if c is None:
            return f"{p.package_id}: not read back"
        return (
            f"{c.trigger} from {names.get(c.sender, c.sender)}: "
            + " | ".join(t[:60] for t in c.texts)
            + (f" (+{c.media} file(s))" if c.media else "")
        )

    seen = "; ".join(line(p) for p in reads.packages) or "(no package)"
    out = [
        Finding(
            expectation=f"packages = {len(expect.package_contents)} (contents)",
            passed=len(reads.packages) == len(expect.package_contents),
            reason=f"{len(reads.packages)} package(s): {seen}",
        )
    ]
    for n, (want, got) in enumerate(zip(expect.package_contents, reads.packages, strict=False)):
        contents = got.contents
        key = f"package {n + 1}"
        if contents is None:
            out.append(Finding(expectation=key, passed=False, reason="nothing to read: no input"))
            continue
        checks: list[tuple[str, bool]] = []
        if want.from_ is not None:
            checks.append((f"from {want.from_}", contents.sender == _recipient(want.from_, phones)))
        if want.trigger is not None:
            checks.append((f"trigger={want.trigger}", contents.trigger == want.trigger))
        if want.texts is not None:
            held = len(contents.texts) == len(want.texts) and all(
                has_words(text, words)
                for text, words in zip(contents.texts, want.texts, strict=True)
            )
            checks.append((f"texts={list(want.texts)}", held))
        if want.media is not None:
            checks.append((f"media={want.media}", contents.media == want.media))
        for what, held in checks:
            out.append(Finding(expectation=f"{key} {what}", passed=held, reason=line(got)))
    return out


def _pending(expect: Expect, reads: Reads, _phones: Mapping[str, str]) -> list[Finding]:
    if not expect.pending:
        return []
    if reads.pending is None:
        return [Finding(expectation="pending", passed=False, reason="nothing to read: no store")]
    seen = (
        "; ".join(
            f"{p.kind} to {p.party_id} ({','.join(p.wo_ids) or '-'}): {p.text[:60]}"
            for p in reads.pending
        )
        or "(nothing out)"
    )
    out: list[Finding] = []
    for want in expect.pending:
        wo_id = _wo_id(want.wo, reads) if want.wo is not None else None
        hits = [
            p
            for p in reads.pending
            if p.kind == want.kind
            and p.party_id == want.to
            and has_words(p.text, want.contains)
            and (want.wo is None or wo_id in p.wo_ids)
        ]
        what = f"{want.kind} out to {want.to}" + (f" about {want.wo}" if want.wo else "")
        what += f" containing {want.contains!r}" if want.contains else ""
        if want.count is None:
            out.append(Finding(expectation=what, passed=bool(hits), reason=f"out: {seen}"))
        else:
            out.append(
                Finding(
                    expectation=f"{what} × {want.count}",
                    passed=len(hits) == want.count,
                    reason=f"{len(hits)} found; out: {seen}",
                )
            )
    return out


def _consent(expect: Expect, reads: Reads, phones: Mapping[str, str]) -> list[Finding]:
    out: list[Finding] = []
    for who, want in expect.opted_out.items():
        got = reads.opted_out.get(_recipient(who, phones), False)
        out.append(
            Finding(
                expectation=f"{who} opted out = {want}",
                passed=got == want,
                reason=f"the consent store: {'opted out' if got else 'not opted out'}",
            )
        )
    return out


def _work_order_fields(expect: Expect, reads: Reads, start: datetime | None) -> list[Finding]:
    """A work order's content fields: category, summary, visit window, notes, interrupted,
    photos."""
    out: list[Finding] = []
    for key, want in expect.work_orders.items():
        wanted = (
            want.category,
            want.summary,
            want.visit,
            want.notes,
            want.interrupted,
            want.photos,
        )
        if all(w is None for w in wanted):
            continue
        wo_id = _wo_id(key, reads)
        wo = reads.work_orders.get(wo_id) if wo_id is not None else None
        if wo_id is None or wo is None:
            continue  # _work_orders has failed it already, or fails it if nothing else is asked
        notes = reads.notes.get(wo_id, ())
        visit = f"{wo.visit.start.isoformat()}..{wo.visit.end.isoformat()}" if wo.visit else "none"
        state = (
            f"{wo_id} category={wo.category} summary={wo.summary[:60]!r} visit={visit} "
            f"notes={[n[:40] for n in notes]} interrupted={reads.interrupted.get(wo_id, False)} "
            f"photos={reads.photos.get(wo_id, 0)}"
        )
        checks: list[tuple[str, bool]] = []
        if want.category is not None:
            checks.append((f"category={want.category}", wo.category == want.category))
        if want.summary is not None:
            checks.append((f"summary has {want.summary!r}", has_words(wo.summary, want.summary)))
        if want.visit == "none":
            checks.append(("visit=none", wo.visit is None))
        elif want.visit is not None:
            if start is None:
                checks.append(("visit", False))
            else:
                window = (start + offset(want.visit.start), start + offset(want.visit.end))
                got = (wo.visit.start, wo.visit.end) if wo.visit else None
                checks.append((f"visit={want.visit.start}..{want.visit.end}", got == window))
        if want.notes is not None:
            held = len(notes) == len(want.notes) and all(
                has_words(n, words) for n, words in zip(notes, want.notes, strict=True)
            )
            checks.append((f"notes={list(want.notes)}", held))
        if want.interrupted is not None:
            got_interrupted = reads.interrupted.get(wo_id, False)
            checks.append((f"interrupted={want.interrupted}", got_interrupted == want.interrupted))
        if want.photos is not None:
            checks.append((f"photos={want.photos}", reads.photos.get(wo_id, 0) == want.photos))
        for what, held in checks:
            out.append(Finding(expectation=f"{key} {what}", passed=held, reason=state))
    return out


_LENSES = (
    _packages,
    _package_contents,
    _lanes,
    _decision_fields,
    _work_orders,
    _messages,
    _pending,
    _consent,
    _truth,
)
