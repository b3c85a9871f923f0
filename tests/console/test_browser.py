"""The console in a real browser: Playwright driving Debian's chromium (never a downloaded one).

A run is started, held at a checkpoint, stepped and played out from the page, with the graph's
lit state moving, the evidence badges appearing, and the page reloaded mid-run (its state comes
back from the server); a lying messenger's run puts a row on the Wall of Shame. Every page gets
an axe-core check (no violations) and a screenshot in ``test-artifacts/console/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_harness import Console

pytestmark = pytest.mark.integration

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
SOURCES = {"twilio-read", "wo-read", "ddb-read", "sfn-read"}
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: `make test` installs it as root (apt-get)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, console: Console) -> Iterator[Any]:
    # bypass_csp: axe is injected by the test; the console's own CSP allows only its scripts.
    context = browser.new_context(bypass_csp=True, viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    opened.goto(console.server.url)  # the token URL: sets the cookie, then drops the token
    assert "token=" not in opened.url
    yield opened
    context.close()


def ready(page: Any, path: str = "") -> None:
    if path:
        page.goto(path)
    page.wait_for_selector("body[data-ready=true]")


def axe_violations(page: Any) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .map(v => ({id: v.id, impact: v.impact, help: v.help,
                        nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"""
    )
    return found


def shoot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def lit(page: Any, machine: str) -> list[str]:
    names: list[str] = page.eval_on_selector_all(
        f'svg[data-machine="{machine}"] g.state[data-lit="true"]',
        "nodes => nodes.map(n => n.dataset.state)",
    )
    return names


def entered(page: Any, machine: str, state: str) -> str:
    text: str = page.text_content(
        f'svg[data-machine="{machine}"] g.state[data-state="{state}"] text.count'
    )
    return text


def held_at(page: Any, gate: str, index: int) -> None:
    page.wait_for_function(
        """([gate, index]) => {
            const s = document.querySelector('#run-status');
            return s.dataset.state === 'held' && s.textContent.includes(`held at "${gate}"`)
                && s.textContent.includes(`(step ${index})`);
        }""",
        arg=[gate, index],
    )


def every_value_has_its_source(page: Any) -> int:
    sources: list[str | None] = page.eval_on_selector_all(
        "[data-value]", "nodes => nodes.map(n => n.dataset.source)"
    )
    assert set(sources) <= SOURCES, set(sources)
    return len(sources)


@pytest.mark.slow
def test_play_to_a_checkpoint_step_reload_and_play_out(page: Any, console: Console) -> None:
    ready(page)
    assert axe_violations(page) == []
    # Keyboard: the graph tabs move with the arrow keys, and show their panel.
    page.focus("#tab-package_pipeline")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.id") == "tab-work_order"
    assert page.is_visible("#graph-work_order")
    assert not page.is_visible("#graph-package_pipeline")
    page.keyboard.press("ArrowLeft")
    page.select_option("#scenario", "two-leaks-clarify")
    page.focus("#step")
    page.keyboard.press("Enter")  # keyboard-usable: a step from the start holds before step 0
    held_at(page, "before the step", 0)
    page.wait_for_function(
        """() => document.querySelector('svg[data-machine="eval_executor"] '
            + 'g.state[data-state="Gate: before the step"]')?.dataset.lit === 'true'"""
    )
    assert page.get_attribute('tr[data-step="0"]', "data-state") == "next"
    run_id = page.get_attribute("body", "data-run")
    assert run_id
    assert run_id.startswith("two-leaks-clarify-")
    assert re.search(r"\?run=two-leaks-clarify-", page.url)

    page.click("#play-checkpoint")
    held_at(page, "after the checkpoint", 1)
    page.wait_for_selector('tr[data-checkpoint="asked-which"][data-grade="pass"]')
    # The lit state moved: from the gate before the step to the one after the checkpoint.
    page.wait_for_function(
        """() => document.querySelector('svg[data-machine="eval_executor"] '
            + 'g.state[data-state="Gate: after the checkpoint"]')?.dataset.lit === 'true'"""
    )
    assert "Gate: before the step" not in lit(page, "eval_executor")
    states = page.eval_on_selector_all("#steps tr", "rows => rows.map(r => r.dataset.state)")
    assert states == ["done", "done", "pending", "pending"]
    assert entered(page, "package_pipeline", "Take the conversation lease") == "1"
    # Evidence badges: the clarifying texts read back from Twilio, the watcher's rows.
    page.click("#tab-messages")
    page.wait_for_selector('#ent-messages [data-badge="twilio-read"]')
    page.click("#tab-ledger")
    page.wait_for_selector('#ent-ledger tr[data-entity="evidence"] [data-badge="twilio-read"]')
    assert every_value_has_its_source(page) > 10
    shoot(page, "evals-held-at-checkpoint")
    assert axe_violations(page) == []

    page.reload()  # mid-run: everything comes back from the server
    ready(page)
    held_at(page, "after the checkpoint", 1)
    assert page.get_attribute('tr[data-checkpoint="asked-which"]', "data-grade") == "pass"
    assert "Gate: after the checkpoint" in lit(page, "eval_executor")
    assert entered(page, "package_pipeline", "Take the conversation lease") == "1"

    page.click("#step")  # one package: the second text and its flush
    held_at(page, "after the checkpoint", 3)
    page.wait_for_selector('tr[data-checkpoint="kitchen-binds"][data-grade="pass"]')
    # The second package went through the pipeline too (resolved without the brain).
    assert entered(page, "package_pipeline", "Take the conversation lease") == "2"
    assert entered(page, "package_pipeline", "Resolve: open questions and holds") == "2"
    page.click("#tab-wos")
    page.click('#ent-wos a:has-text("WO-204")')
    ready(page)
    assert page.text_content("#wo").count("WO-204") >= 1
    every_value_has_its_source(page)
    shoot(page, "work-order")
    assert axe_violations(page) == []

    page.go_back()
    ready(page)
    page.click("#play")
    page.wait_for_selector("#verdict[data-verdict=passed]")
    # The verdict is the run row's; the executor's execution leaves its Finish state a moment
    # after writing it, and the graph goes dark when the page reads that.
    page.wait_for_function(
        """() => document.querySelectorAll(
            'svg[data-machine="eval_executor"] g.state[data-lit="true"]').length === 0"""
    )
    assert lit(page, "eval_executor") == []
    shoot(page, "evals-passed")
    console.controller.wait_finished(run_id, 30)


def test_the_pages_show_the_liars_shame(
    page: Any, console: Console, lying_run: tuple[str, list[str]]
) -> None:
    run_id, lies = lying_run
    ready(page, f"{console.server.base}/shame")
    row = page.wait_for_selector(
        'tr[data-kind="unverified_claim"][data-scenario="leak-204"]', timeout=5000
    )
    assert int(row.query_selector("td:nth-of-type(2)").text_content()) >= len(lies)
    assert lies[0][:10] in page.text_content("#shame-rows")
    shoot(page, "wall-of-shame")
    assert axe_violations(page) == []

    ready(page, f"{console.server.base}/runs")
    line = page.wait_for_selector(f'tr[data-run="{run_id}"]')
    assert "failed" in line.text_content()
    assert "unverified_claim" in line.text_content()
    shoot(page, "runs")
    assert axe_violations(page) == []

    ready(page, f"{console.server.base}/executions?run={run_id}")
    page.wait_for_selector("#executions tr[data-execution]")
    assert "SUCCEEDED" in page.text_content("#executions") or "FAILED" in page.text_content(
        "#executions"
    )
    every_value_has_its_source(page)
    shoot(page, "executions")
    assert axe_violations(page) == []

    ready(page, f"{console.server.base}/decisions?run={run_id}")
    page.wait_for_selector("#packages tr[data-decision]")
    assert "schedule_visit:WO-204" in page.text_content("#packages")  # the votes, as read
    every_value_has_its_source(page)
    shoot(page, "decisions")
    assert axe_violations(page) == []

    # A past run replays from its stored reads: its shame rows come back on the Evals page.
    ready(page, f"{console.server.base}/?run={run_id}")
    page.wait_for_selector("#verdict[data-verdict=failed]")
    page.click("#replay")
    page.click("#tab-ledger")
    page.wait_for_selector('#ent-ledger tr[data-entity="shame"]')
    shoot(page, "evals-replay")
