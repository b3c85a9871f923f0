"""`maestro demo`'s text for what the demo itself never shows: a trap sprung."""

from __future__ import annotations

from maestro_dev.local.stack_demo import DemoReport, PackageReport, render


def _package(*targets: str | None) -> PackageReport:
    return PackageReport(
        title="an access reply (a trap)",
        sender="Maria",
        texts=["2 onward"],
        package_id="pkg-1",
        trigger="idle_timeout",
        status="SUCCEEDED",
        route="reasoning",
        brain=None,
        samples=[],
        consensus=None,
        actions=[{"lane": "record_rating", "target_wo_id": t} for t in targets],
        effects=[],
        states=["Pre-check: safety first"],
        transitions=1,
        decisions=1,
        trap="WO-198",
    )


def test_a_sprung_trap_is_said_to_be_sprung() -> None:
    sprung = _package("WO-198")
    assert sprung.trap_sprung
    text = render(DemoReport(brain="offline", packages=[sprung]))
    assert "the trap SPRUNG: record_rating(WO-198) touched WO-198" in text
    assert "avoided" not in text


def test_an_avoided_trap_is_said_to_be_avoided() -> None:
    avoided = _package("WO-204")
    assert not avoided.trap_sprung
    text = render(DemoReport(brain="offline", packages=[avoided]))
    assert "the trap avoided: record_rating(WO-204); nothing touched WO-198" in text
