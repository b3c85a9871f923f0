"""The console's web app (Starlette): the controller contract as an HTTP API, SSE, and pages.

API (JSON; every route behind :mod:`maestro_dev.console.access`):

- ``GET /api/scenarios``: the catalog;
- ``POST /api/runs`` ``{scenario, mode: all|checkpoint|step, package_gates?}`` → ``{run_id}``;
- ``POST /api/runs/{id}/pause`` | ``/resume`` (``{mode}`` optional) | ``/step`` | ``/stop``;
- ``POST /api/runs/{id}/release`` ``{gate}``: one of a package's paused step gates;
- ``GET /api/runs``: every run, live and archived;
- ``GET /api/runs/{id}``: a consistent snapshot (every latest read, as of one ``seq``);
- ``GET /api/runs/{id}/events``: server-sent events, one per read (``after=`` or
  ``Last-Event-ID`` to go on from a snapshot's ``seq``); ``event: end`` when the run is over;
- ``GET /api/runs/{id}/reads`` (``kind=``, ``key=``): the run's reads so far, as JSON;
- ``GET /api/shame``: the Wall of Shame.

Pages are server-rendered shells (the graphs drawn here from the ASL files) that a small
vanilla script (``static/console.js``) fills from the API: no build step, nothing from a CDN.
"""

from __future__ import annotations

import html
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from maestro_dev.console import graph
from maestro_dev.console.access import AccessMiddleware, App, ConsoleAccess
from maestro_dev.console.controller import BusyError, Controller, UnknownError
from maestro_dev.console.session import RunFinishedError

STATIC = Path(__file__).parent / "static"
MODES = ("all", "checkpoint", "step")
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
SSE_WAIT_SECONDS = 1.0
SSE_HEARTBEAT_SECONDS = 10.0
PAGES = (
    ("evals", "/", "Evals"),
    ("runs", "/runs", "Runs"),
    ("shame", "/shame", "Wall of Shame"),
    ("executions", "/executions", "Executions"),
    ("decisions", "/decisions", "Decisions"),
)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def build_app(
    controller: Controller,
    access: ConsoleAccess,
    stopping: Callable[[], bool] = lambda: False,
) -> App:
    """The app; ``stopping`` says the server is shutting down (an open stream then ends, so
    the shutdown does not wait on a page left open)."""
    graphs = {name: graph.svg(graph.load(name)) for name in graph.MACHINES}

    async def call(fn: Any, *args: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: fn(*args))

    async def guarded(fn: Any, *args: Any) -> Response:
        try:
            return JSONResponse(await call(fn, *args))
        except UnknownError as error:
            return _error(404, str(error))
        except (BusyError, RunFinishedError) as error:
            return _error(409, str(error))

    # -- the API ---------------------------------------------------------------------------------

    async def scenarios(_: Request) -> Response:
        return JSONResponse({"scenarios": await call(controller.scenarios)})

    async def runs(_: Request) -> Response:
        return JSONResponse({"runs": await call(controller.runs)})

    async def start(request: Request) -> Response:
        body = await _body(request)
        if body is None:
            return _error(400, "a JSON object: {scenario, mode}")
        mode = body.get("mode", "all")
        if mode not in MODES or not isinstance(body.get("scenario"), str):
            return _error(400, f"scenario: an id; mode: one of {', '.join(MODES)}")
        package_gates = body.get("package_gates", False)
        if not isinstance(package_gates, bool) or (package_gates and mode != "step"):
            return _error(400, "package_gates: true only with mode step")
        try:
            run_id = await call(controller.start, body["scenario"], mode, package_gates)
        except UnknownError as error:
            return _error(404, str(error))
        except BusyError as error:
            return _error(409, str(error))
        except (RuntimeError, TimeoutError) as error:  # its stack could not start: said
            return _error(500, f"the run could not start: {error}")
        return JSONResponse({"run_id": run_id}, status_code=201)

    async def control(request: Request) -> Response:
        run_id, verb = request.path_params["run_id"], request.path_params["verb"]
        if verb == "pause":
            return await guarded(controller.pause, run_id)
        if verb == "step":
            return await guarded(controller.step, run_id)
        if verb == "stop":
            return await guarded(_stop, controller, run_id)
        if verb == "release":
            body = await _body(request)
            if body is None or not isinstance(body.get("gate"), str):
                return _error(400, "a JSON object: {gate: the package gate's key}")
            return await guarded(controller.release, run_id, body["gate"])
        if verb == "resume":
            body = await _body(request, empty_ok=True)
            mode = (body or {}).get("mode")
            if mode is not None and mode not in MODES:
                return _error(400, f"mode: one of {', '.join(MODES)}")
            return await guarded(controller.resume, run_id, mode)
        return _error(404, f"no such control {verb!r}")

    async def snapshot(request: Request) -> Response:
        return await guarded(controller.snapshot, request.path_params["run_id"])

    async def events(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        # A reconnecting EventSource says where it got to; that wins over the URL's start.
        after_text = request.headers.get("last-event-id") or request.query_params.get("after")
        try:
            after = int(after_text or 0)
            await call(controller.snapshot, run_id)  # 404 before a stream starts
        except ValueError:
            return _error(400, "after: a sequence number")
        except UnknownError as error:
            return _error(404, str(error))

        async def stream() -> AsyncIterator[str]:
            position, quiet = after, 0.0
            yield "retry: 1000\n\n"
            while not stopping():
                found, more = await call(controller.events, run_id, position, SSE_WAIT_SECONDS)
                for event in found:
                    position = event["seq"]
                    yield f"id: {position}\nevent: read\ndata: {json.dumps(event)}\n\n"
                if not more and not found:
                    yield "event: end\ndata: {}\n\n"
                    return
                quiet = 0.0 if found else quiet + SSE_WAIT_SECONDS
                if quiet >= SSE_HEARTBEAT_SECONDS:  # a comment line keeps proxies from closing
                    quiet = 0.0
                    yield ": still here\n\n"

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    async def reads(request: Request) -> Response:
        """Every read of the run so far (JSON, not a stream), optionally of one kind and key."""
        kind, key = request.query_params.get("kind"), request.query_params.get("key")
        try:
            found, _ = await call(controller.events, request.path_params["run_id"], 0)
        except UnknownError as error:
            return _error(404, str(error))
        chosen = [
            e
            for e in found
            if (kind is None or e["kind"] == kind) and (key is None or e["key"] == key)
        ]
        return JSONResponse({"events": chosen})

    async def shame(_: Request) -> Response:
        return JSONResponse(await call(controller.shame))

    # -- pages -----------------------------------------------------------------------------------

    def page(name: str, title: str, body: str) -> HTMLResponse:
        nav = "".join(
            f'<li><a href="{href}"{" aria-current=page" if key == name else ""}>{label}</a></li>'
            for key, href, label in PAGES
        )
        return HTMLResponse(
            f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} · maestro console</title>
<link rel="stylesheet" href="/static/console.css">
<script src="/static/console.js" defer></script>
</head><body data-page="{name}">
<a class="skip" href="#main">Skip to content</a>
<header><span class="brand">maestro console</span>
<nav aria-label="Pages"><ul>{nav}</ul></nav>
<span class="local">local · embedded stack</span></header>
<main id="main"><h1>{html.escape(title)}</h1>{body}</main>
</body></html>""",
            headers={"cache-control": "no-store", "content-security-policy": CSP},
        )

    async def evals_page(_: Request) -> Response:
        tabs = "".join(
            f'<button role="tab" id="tab-{m}" aria-controls="graph-{m}" '
            f'aria-selected="{"true" if i == 0 else "false"}" tabindex="{0 if i == 0 else -1}">'
            f"{graph.TITLES[m]}</button>"
            for i, m in enumerate(graphs)
        )
        panels = "".join(
            f'<div role="tabpanel" id="graph-{m}" aria-labelledby="tab-{m}" class="graph" '
            f'tabindex="0"{"" if i == 0 else " hidden"}>{svg}</div>'
            for i, (m, svg) in enumerate(graphs.items())
        )
        return page("evals", "Evals", EVALS_BODY.format(graph_tabs=tabs, graph_panels=panels))

    async def runs_page(_: Request) -> Response:
        return page("runs", "Runs", RUNS_BODY)

    async def shame_page(_: Request) -> Response:
        return page("shame", "Wall of Shame", SHAME_BODY)

    async def executions_page(_: Request) -> Response:
        return page("executions", "Executions", EXECUTIONS_BODY)

    async def decisions_page(_: Request) -> Response:
        return page("decisions", "Decisions", DECISIONS_BODY)

    async def wo_page(_: Request) -> Response:
        return page("wo", "Work order", WO_BODY)

    routes = [
        Route("/", evals_page),
        Route("/runs", runs_page),
        Route("/shame", shame_page),
        Route("/executions", executions_page),
        Route("/decisions", decisions_page),
        Route("/wo", wo_page),
        Route("/api/scenarios", scenarios),
        Route("/api/shame", shame),
        Route("/api/runs", runs, methods=["GET"]),
        Route("/api/runs", start, methods=["POST"]),
        Route("/api/runs/{run_id}", snapshot),
        Route("/api/runs/{run_id}/events", events),
        Route("/api/runs/{run_id}/reads", reads),
        Route("/api/runs/{run_id}/{verb}", control, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC)),
    ]
    app = Starlette(routes=routes)
    return AccessMiddleware(app, access)


def _stop(controller: Controller, run_id: str) -> dict[str, str]:
    controller.stop(run_id)
    return {"stopping": run_id}


async def _body(request: Request, *, empty_ok: bool = False) -> dict[str, Any] | None:
    raw = await request.body()
    if not raw and empty_ok:
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


EVALS_BODY = """
<section aria-labelledby="catalog-h" class="catalog">
 <h2 id="catalog-h">Scenarios</h2>
 <details id="catalog-box" open><summary>The catalog: what each scenario is about, who takes
 part, the packages it expects</summary>
 <ul id="catalog" class="catalog-list"></ul></details>
</section>
<section aria-labelledby="run-h" class="run">
 <h2 id="run-h">Run</h2>
 <div class="controls" role="group" aria-label="Run controls">
  <label for="scenario">Scenario</label> <select id="scenario" name="scenario"></select>
  <label><input type="checkbox" id="package-gates"> pause inside packages too (a run
  started with Step)</label>
  <button id="play" type="button">Play</button>
  <button id="play-checkpoint" type="button">Play to checkpoint</button>
  <button id="pause" type="button">Pause</button>
  <button id="step" type="button">Step</button>
  <button id="stop" type="button">Stop</button>
  <button id="replay" type="button" hidden>Replay</button>
 </div>
 <p id="run-status" role="status" aria-live="polite">No run yet: pick a scenario and press Play.</p>
 <p id="verdict" class="verdict" aria-live="polite"></p>
 <h3 id="steps-h">Steps</h3>
 <table class="grid" aria-labelledby="steps-h"><thead><tr><th scope="col">Step</th>
  <th scope="col">What</th><th scope="col">Injected at</th><th scope="col">Packages</th>
  <th scope="col">Read</th></tr></thead><tbody id="steps"></tbody></table>
 <h3 id="grid-h">Checkpoints</h3>
 <table class="grid" aria-labelledby="grid-h"><thead><tr><th scope="col">Checkpoint</th>
  <th scope="col">After step</th><th scope="col">Expects</th><th scope="col">Grade</th>
  <th scope="col">Why</th></tr></thead><tbody id="grid"></tbody></table>
</section>
<section aria-labelledby="graph-h" class="graphs">
 <h2 id="graph-h">Where the flow is</h2>
 <p class="hint">Drawn from the ASL files; a lit state is where a live execution is now
 (read from Step Functions' history, <span class="badge sfn-read">sfn-read</span>), a number
 how many executions of this run entered it.</p>
 <div role="tablist" aria-label="State machines" class="tabs">{graph_tabs}</div>
 {graph_panels}
</section>
<section aria-labelledby="entities-h" class="entities">
 <h2 id="entities-h">What the reads show</h2>
 <div role="tablist" aria-label="Entities" class="tabs">
  <button role="tab" id="tab-wos" aria-controls="ent-wos" aria-selected="true" tabindex="0">
   Work orders <span class="n" id="n-wos">0</span></button>
  <button role="tab" id="tab-messages" aria-controls="ent-messages" aria-selected="false"
   tabindex="-1">Messages <span class="n" id="n-messages">0</span></button>
  <button role="tab" id="tab-decisions" aria-controls="ent-decisions" aria-selected="false"
   tabindex="-1">Decisions <span class="n" id="n-decisions">0</span></button>
  <button role="tab" id="tab-ledger" aria-controls="ent-ledger" aria-selected="false"
   tabindex="-1">Evidence and shame <span class="n" id="n-ledger">0</span></button>
 </div>
 <div role="tabpanel" id="ent-wos" aria-labelledby="tab-wos" tabindex="0"></div>
 <div role="tabpanel" id="ent-messages" aria-labelledby="tab-messages" tabindex="0" hidden></div>
 <div role="tabpanel" id="ent-decisions" aria-labelledby="tab-decisions" tabindex="0" hidden>
 </div>
 <div role="tabpanel" id="ent-ledger" aria-labelledby="tab-ledger" tabindex="0" hidden></div>
</section>
<section aria-labelledby="log-h" class="log">
 <h2 id="log-h">Reads, newest first</h2>
 <ol id="log" reversed tabindex="0" aria-labelledby="log-h"></ol>
</section>
"""

RUNS_BODY = """
<p>Every run: the live one and the archived ones. A past run replays from its stored rows and
reads (no rewind: a run is a real forward execution).</p>
<table class="list" aria-describedby="runs-caption"><caption id="runs-caption">Runs, newest
first</caption><thead><tr><th scope="col">Run</th><th scope="col">Scenario</th>
<th scope="col">Mode</th><th scope="col">Status</th><th scope="col">Checkpoints</th>
<th scope="col">Shame</th><th scope="col">Reads</th></tr></thead><tbody id="runs"></tbody>
</table>
"""

SHAME_BODY = """
<p>Every standing Shame row the watcher wrote in a run: a claim no independent read confirmed
(<code>unverified_claim</code>), a read that says otherwise (<code>mismatch</code>), an effect
with no event (<code>missing_event</code>). By kind and scenario, trended across runs (oldest
run first). The goal is not to pass evals; it is never to lie.</p>
<table class="list" id="board-table"><caption>The board</caption><thead><tr>
<th scope="col">Kind</th><th scope="col">Scenario</th><th scope="col">Total</th>
<th scope="col">Trend (per run)</th></tr></thead><tbody id="board"></tbody></table>
<h2 id="shame-rows-h">The rows</h2>
<table class="list" aria-labelledby="shame-rows-h"><thead><tr><th scope="col">Run</th>
<th scope="col">Kind</th><th scope="col">Claim</th><th scope="col">Subject</th>
<th scope="col">What the read said</th></tr></thead><tbody id="shame-rows"></tbody></table>
"""

EXECUTIONS_BODY = """
<p>The executions of a run (the eval executor, each package, each work order), where each is
now, and the gates the run is paused at.</p>
<label for="run-pick">Run</label> <select id="run-pick"></select>
<h2 id="gates-h">Paused gates</h2>
<ul id="gates" aria-labelledby="gates-h"></ul>
<h2 id="package-gates-h">Packages paused at their step gates</h2>
<ul id="package-gates" aria-labelledby="package-gates-h"></ul>
<h2 id="exec-h">Executions</h2>
<table class="list" aria-labelledby="exec-h"><thead><tr><th scope="col">Machine</th>
<th scope="col">Execution</th><th scope="col">Status</th><th scope="col">Now in</th>
<th scope="col">States entered</th></tr></thead><tbody id="executions"></tbody></table>
"""

DECISIONS_BODY = """
<p>A package's decisions: every stage, with the samples drawn, the votes and the threshold
they had to clear (read from the decision log).</p>
<label for="run-pick">Run</label> <select id="run-pick"></select>
<div id="packages"></div>
"""

WO_BODY = """
<p id="wo-where"></p>
<div id="wo"></div>
<h2 id="wo-reads-h">Every read of it</h2>
<ol id="wo-reads" aria-labelledby="wo-reads-h"></ol>
<h2 id="wo-ledger-h">Evidence and shame about it</h2>
<ul id="wo-ledger" aria-labelledby="wo-ledger-h"></ul>
"""
