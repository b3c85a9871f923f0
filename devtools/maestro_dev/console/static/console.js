// maestro console: fills the server-rendered pages from the controller's API. Vanilla, no build.
// Every value shown comes from a read event and carries its source as a badge.
"use strict";

const $ = (selector, root = document) => root.querySelector(selector);
const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "role" || key === "href"
      || key === "scope" || key === "id" || key === "title" || key === "for" || key === "type") {
      node.setAttribute(key, value === true ? "" : String(value));
    } else node[key] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(method, path, body) {
  const options = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    options.headers["content-type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

function badge(source) {
  return el("span", { class: `badge ${source}`, "data-badge": source, title: `read from ${source}` },
    source);
}

// A value as read: its text and the source of the read it came from.
function value(text, source) {
  return el("span", { class: "value", "data-value": "", "data-source": source },
    text === null || text === undefined || text === "" ? "—" : String(text));
}

function short(text, n = 80) {
  text = String(text ?? "");
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

// ARIA tabs: click or arrow keys move between them; only the chosen panel shows.
function setupTabs(tablist) {
  const tabs = $$('[role="tab"]', tablist);
  const choose = (tab, focus) => {
    for (const other of tabs) {
      const chosen = other === tab;
      other.setAttribute("aria-selected", chosen ? "true" : "false");
      other.tabIndex = chosen ? 0 : -1;
      document.getElementById(other.getAttribute("aria-controls")).hidden = !chosen;
    }
    if (focus) tab.focus();
  };
  tabs.forEach((tab, index) => {
    tab.addEventListener("click", () => choose(tab, false));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (step) {
        event.preventDefault();
        choose(tabs[(index + step + tabs.length) % tabs.length], true);
      } else if (event.key === "Home") choose(tabs[0], true);
      else if (event.key === "End") choose(tabs[tabs.length - 1], true);
    });
  });
}

function table(headers, rows, label) {
  return el("table", { class: "list", "aria-label": label },
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, rows));
}

function runFromUrl() {
  return new URLSearchParams(location.search).get("run");
}

// -- the run model: the latest read of each (kind, key), filled by the snapshot and the stream --

class RunView {
  constructor(onChange) {
    this.onChange = onChange;
    this.reset();
  }
  reset() {
    this.snapshot = null;
    this.latest = {};
    this.log = [];
    this.seq = 0;
    if (this.source) this.source.close();
    this.source = null;
  }
  get(kind) {
    return Object.values(this.latest[kind] || {});
  }
  apply(event) {
    if (event.seq <= this.seq) return;
    this.seq = event.seq;
    (this.latest[event.kind] ||= {})[event.key] = event;
    this.log.push(event);
    if (this.log.length > 300) this.log.shift();
  }
  async load(runId) {
    this.reset();
    this.snapshot = await api("GET", `/api/runs/${encodeURIComponent(runId)}`);
    this.latest = this.snapshot.latest;
    this.seq = this.snapshot.seq;
    this.onChange();
    if (this.snapshot.live) this.subscribe();
  }
  subscribe() {
    const runId = this.snapshot.run_id;
    const source = new EventSource(
      `/api/runs/${encodeURIComponent(runId)}/events?after=${this.seq}`);
    this.source = source;
    let pending = false;
    source.addEventListener("read", (message) => {
      this.apply(JSON.parse(message.data));
      if (!pending) {
        pending = true;
        setTimeout(() => { pending = false; this.onChange(); }, 50);
      }
    });
    source.addEventListener("end", async () => {
      source.close();
      this.snapshot = await api("GET", `/api/runs/${encodeURIComponent(runId)}`);
      this.onChange();
    });
  }
  async replay(delay = 40) {
    const runId = this.snapshot.run_id;
    const { events } = await api("GET", `/api/runs/${encodeURIComponent(runId)}/reads`);
    const keep = this.snapshot;
    this.reset();
    this.snapshot = { ...keep, live: false };
    for (const event of events) {
      this.apply(event);
      this.onChange();
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  status() {
    const session = this.latest.session?.status?.value?.status;
    const run = this.get("run")[0]?.value;
    const control = this.get("control")[0]?.value;
    const open = this.get("gate").filter((g) => g.value.status === "open");
    const packageGates = this.get("package_gate").filter((g) => g.value.status === "open");
    return { session, run, control, open, packageGates };
  }
}

// -- the Evals page -----------------------------------------------------------------------------

function evalsPage() {
  const scenarios = {};
  const select = $("#scenario");
  const view = new RunView(render);
  setupTabs($(".graphs [role=tablist]"));
  setupTabs($(".entities [role=tablist]"));

  function renderCatalog(list) {
    const catalog = $("#catalog");
    catalog.replaceChildren();
    for (const s of list) {
      scenarios[s.id] = s;
      select.append(el("option", { value: s.id, text: `${s.id}: ${s.title}` }));
      const expects = s.checkpoints.map((c) =>
        `${c.id} after step ${c.after}` + (c.packages !== null ? `: ${c.packages} package(s)` : "")
        + (c.lanes.length ? ` [${c.lanes.join(", ")}]` : ""));
      catalog.append(el("li", { "data-scenario": s.id },
        el("h3", {}, el("button", { type: "button", class: "link", "data-pick": s.id,
          text: s.id, "aria-label": `Choose ${s.id}` }), ` ${s.title}`),
        el("p", { text: s.description }),
        el("p", { class: "small" }, el("strong", { text: "Parties: " }),
          s.parties.map((p) => `${p.id} (${p.role})`).join(", ") || "—"),
        el("p", { class: "small" }, el("strong", { text: "Expects: " }),
          `${s.turns.length} steps, ${s.flushes} flush(es); ` + expects.join("; "))));
    }
    $$("[data-pick]").forEach((b) => b.addEventListener("click", () => {
      select.value = b.dataset.pick;
      renderSteps();
      renderGrid();
      select.focus();
    }));
  }

  function scenarioOfView() {
    const id = view.snapshot?.scenario_id || select.value;
    return scenarios[id];
  }

  function renderGrid() {
    const scenario = scenarioOfView();
    const grid = $("#grid");
    grid.replaceChildren();
    if (!scenario) return;
    for (const c of scenario.checkpoints) {
      const graded = view.latest.checkpoint?.[c.id];
      const state = graded ? (graded.value.passed ? "pass" : "fail") : "pending";
      const expects = (c.packages !== null ? `${c.packages} package(s)` : "")
        + (c.lanes.length ? ` ${c.lanes.join(", ")}` : "")
        + (c.decisions.length ? ` ${c.decisions.map((d) => Object.entries(d).map(([k, v]) => `${k}=${v}`).join(" ")).join("; ")}` : "");
      grid.append(el("tr", { class: state, "data-checkpoint": c.id, "data-grade": state },
        el("th", { scope: "row", text: c.id }),
        el("td", { text: c.after }),
        el("td", { text: expects || "—" }),
        el("td", {}, graded ? [value(state === "pass" ? "passed" : "FAILED", graded.source), " ",
          badge(graded.source)] : "pending"),
        el("td", { text: graded ? short(graded.value.reason, 200) : "" })));
    }
  }

  function renderSteps() {
    const scenario = scenarioOfView();
    const body = $("#steps");
    body.replaceChildren();
    if (!scenario) return;
    const { open } = view.status();
    const heldBefore = open.find((g) => g.value.gate === "before the step")?.value.index;
    for (const turn of scenario.turns) {
      const row = view.latest.step?.[String(turn.index).padStart(3, "0")];
      const what = turn.kind === "turn" ? `${turn.from}: “${turn.text}”`
        : turn.kind === "flush" ? `flush: ${turn.flush}` : `${turn.kind} ${JSON.stringify(turn)}`;
      const state = row ? "done" : (heldBefore === turn.index ? "next" : "pending");
      body.append(el("tr", { class: state === "done" ? "pass" : "pending", "data-step": turn.index,
        "data-state": state },
        el("th", { scope: "row", text: turn.index }),
        el("td", { text: short(what, 120) }),
        el("td", {}, row ? value(row.value.at, row.source) : (state === "next" ? "held before it" : "—")),
        el("td", {}, row ? value(row.value.packages.length, row.source) : "—"),
        el("td", {}, row ? badge(row.source) : "")));
    }
  }

  function renderGraphs() {
    const executions = view.get("execution").map((e) => e.value);
    for (const svg of $$("svg.asl")) {
      const machine = svg.dataset.machine;
      const mine = executions.filter((e) => e.machine === machine);
      for (const node of $$("g.state", svg)) {
        const name = node.dataset.state;
        const lit = mine.filter((e) => e.current.includes(name)).length;
        const entered = mine.filter((e) => e.entered.includes(name)).length;
        node.classList.toggle("lit", lit > 0);
        node.classList.toggle("visited", entered > 0);
        node.dataset.lit = lit > 0 ? "true" : "false";
        $(".count", node).textContent = entered ? String(entered) : "";
      }
    }
  }

  function renderEntities() {
    const runId = view.snapshot?.run_id;
    const wos = view.get("wo").sort((a, b) => a.key.localeCompare(b.key));
    $("#ent-wos").replaceChildren(table(
      ["Work order", "Status", "Summary", "Vendor", "Version", "Read"],
      wos.map((e) => el("tr", { "data-entity": "wo", "data-key": e.key },
        el("td", {}, el("a", { href: `/wo?run=${encodeURIComponent(runId)}&wo=${encodeURIComponent(e.key)}` },
          value(e.key, e.source))),
        el("td", {}, value(e.value.status, e.source)),
        el("td", {}, value(short(e.value.summary), e.source)),
        el("td", {}, value(e.value.vendor_id, e.source)),
        el("td", {}, value(e.value.version, e.source)),
        el("td", {}, badge(e.source)))),
      "Work orders, as read from the WO store"));
    const messages = view.get("message");
    $("#ent-messages").replaceChildren(table(
      ["SID", "To", "Text", "Status", "Read"],
      messages.map((e) => el("tr", { "data-entity": "message", "data-key": e.key },
        el("td", {}, value(short(e.key, 14), e.source)),
        el("td", {}, value(e.value.to, e.source)),
        el("td", {}, value(e.value.body, e.source)),
        el("td", {}, value(e.value.status, e.source)),
        el("td", {}, badge(e.source)))),
      "Messages, as read from Twilio by SID"));
    const decisions = view.get("decision").sort((a, b) => a.seq - b.seq);
    $("#ent-decisions").replaceChildren(table(
      ["Package", "Stage", "Lane", "Disposition", "Target", "Confidence", "Read"],
      decisions.map((e) => el("tr", { "data-entity": "decision", "data-key": e.key },
        el("td", {}, el("a", { href: `/decisions?run=${encodeURIComponent(runId)}#${e.value.package_id}` },
          value(short(e.value.package_id, 24), e.source))),
        el("td", {}, value(e.value.stage, e.source)),
        el("td", {}, value(e.value.lane, e.source)),
        el("td", {}, value(e.value.disposition, e.source)),
        el("td", {}, value(e.value.target_wo_id, e.source)),
        el("td", {}, value(Number(e.value.confidence).toFixed(2), e.source)),
        el("td", {}, badge(e.source)))),
      "Decisions, as read from the decision log"));
    const ledger = [...view.get("evidence"), ...view.get("shame")].sort((a, b) => a.seq - b.seq);
    $("#ent-ledger").replaceChildren(table(
      ["Verdict", "Claim", "Subject", "Watcher read", "Detail", "Read"],
      ledger.map((e) => el("tr", { "data-entity": e.kind, "data-key": e.key, class: e.kind },
        el("td", {}, value(e.value.kind || e.value.verdict, e.source)),
        el("td", {}, value(e.value.event_type, e.source)),
        el("td", {}, value(short(e.value.subject_id, 24), e.source)),
        el("td", {}, e.value.provenance ? badge(e.value.provenance) : value("nothing read", e.source)),
        el("td", {}, value(short(e.value.detail, 120), e.source)),
        el("td", {}, badge(e.source)))),
      "Evidence and shame rows, as read from the ledger"));
    $("#n-wos").textContent = wos.length;
    $("#n-messages").textContent = messages.length;
    $("#n-decisions").textContent = decisions.length;
    $("#n-ledger").textContent = ledger.length;
  }

  function renderStatus() {
    const snap = view.snapshot;
    const status = $("#run-status");
    const verdict = $("#verdict");
    if (!snap) {
      status.textContent = "No run yet: pick a scenario and press Play.";
      verdict.textContent = "";
      return;
    }
    const { session, run, control, open, packageGates } = view.status();
    let text = `Run ${snap.run_id} (${snap.scenario_id})`;
    const live = snap.live && !["passed", "failed", "stopped", "error"].includes(session);
    if (!live) text += `: ${session || run?.status || snap.status}`;
    else if (packageGates.length) {
      const g = packageGates[0].value;
      text += `: package ${g.package_id} held at "${g.gate}"`;
    } else if (open.length) {
      const g = open[0].value;
      text += `: held at "${g.gate}" (step ${g.index})`;
    } else text += ": running";
    if (control) {
      text += ` · mode ${control.mode}${control.paused ? ", pause requested" : ""}`
        + (control.step_until !== null ? `, stepping to package ${control.step_until}` : "");
    }
    status.textContent = text;
    const isHeld = open.length || packageGates.length;
    status.dataset.state = live ? (isHeld ? "held" : "running") : "finished";
    document.body.dataset.run = snap.run_id;
    if (run && run.status !== "running") {
      const passed = run.status === "passed";
      verdict.replaceChildren(value(passed ? "PASSED" : "FAILED", "ddb-read"), " ",
        passed ? "every checkpoint was graded and held" : (run.error || "a checkpoint failed"),
        " ", badge("ddb-read"));
      verdict.className = `verdict ${passed ? "pass" : "fail"}`;
      verdict.dataset.verdict = run.status;
    } else if (snap.error) {
      verdict.textContent = `The run could not go on: ${snap.error}`;
      verdict.className = "verdict fail";
    } else {
      verdict.textContent = "";
      verdict.className = "verdict";
    }
    $("#pause").disabled = !live;
    $("#stop").disabled = !live;
    $("#replay").hidden = live;
  }

  function renderLog() {
    const log = $("#log");
    log.replaceChildren(...view.log.slice(-60).reverse().map((e) =>
      el("li", { "data-kind": e.kind }, badge(e.source), ` ${e.kind} ${short(e.key, 40)}: `,
        short(JSON.stringify(e.value), 140))));
  }

  function render() {
    renderStatus();
    renderSteps();
    renderGrid();
    renderGraphs();
    renderEntities();
    renderLog();
  }

  async function act(action) {
    const live = view.snapshot && view.snapshot.live
      && !["passed", "failed", "stopped", "error"].includes(view.status().session);
    try {
      if (!live) {
        const mode = { play: "all", checkpoint: "checkpoint", step: "step" }[action];
        if (!mode) return;
        const packageGates = mode === "step" && $("#package-gates").checked;
        const { run_id } = await api("POST", "/api/runs",
          { scenario: select.value, mode, package_gates: packageGates });
        $("#catalog-box").open = false;
        history.replaceState(null, "", `/?run=${encodeURIComponent(run_id)}`);
        await view.load(run_id);
        return;
      }
      const id = encodeURIComponent(view.snapshot.run_id);
      if (action === "play") await api("POST", `/api/runs/${id}/resume`, { mode: "all" });
      else if (action === "checkpoint") await api("POST", `/api/runs/${id}/resume`, { mode: "checkpoint" });
      else await api("POST", `/api/runs/${id}/${action}`);
    } catch (error) {
      $("#run-status").textContent = `Refused: ${error.message}`;
    }
  }

  $("#play").addEventListener("click", () => act("play"));
  $("#play-checkpoint").addEventListener("click", () => act("checkpoint"));
  $("#pause").addEventListener("click", () => act("pause"));
  $("#step").addEventListener("click", () => act("step"));
  $("#stop").addEventListener("click", () => act("stop"));
  $("#replay").addEventListener("click", () => view.replay());
  select.addEventListener("change", () => { if (!view.snapshot) { renderSteps(); renderGrid(); } });

  (async () => {
    const { scenarios: list } = await api("GET", "/api/scenarios");
    renderCatalog(list);
    const runId = runFromUrl();
    if (runId) {
      $("#catalog-box").open = false;  // a run to show: the catalog folds away
      await view.load(runId);
      if (scenarios[view.snapshot.scenario_id]) select.value = view.snapshot.scenario_id;
    }
    render();
    document.body.dataset.ready = "true";
  })();
}

// -- Runs -----------------------------------------------------------------------------------------

async function runsPage() {
  const { runs } = await api("GET", "/api/runs");
  $("#runs").replaceChildren(...runs.map((r) => el("tr", { "data-run": r.run_id },
    el("td", {}, el("a", { href: `/?run=${encodeURIComponent(r.run_id)}`, text: r.run_id })),
    el("td", { text: r.scenario_id }),
    el("td", { text: r.mode }),
    el("td", { text: r.status }),
    el("td", { text: r.checkpoints.map((c) => `${c.passed ? "✓" : "✗"} ${c.id}`).join(", ") || "—" }),
    el("td", { text: Object.entries(r.shame).map(([k, n]) => `${k} ×${n}`).join(", ") || "none" }),
    el("td", { text: r.events }))));
  document.body.dataset.ready = "true";
}

// -- Wall of Shame ----------------------------------------------------------------------------------

async function shamePage() {
  const board = await api("GET", "/api/shame");
  const widest = Math.max(1, ...board.board.flatMap((b) => b.trend.map((t) => t.count)));
  $("#board").replaceChildren(...board.board.map((b) => el("tr",
    { "data-kind": b.kind, "data-scenario": b.scenario_id },
    el("th", { scope: "row", text: b.kind }),
    el("td", { text: b.scenario_id }),
    el("td", { text: b.total }),
    el("td", {}, el("span", { class: "trend", role: "img",
      "aria-label": `per run, oldest first: ${b.trend.map((t) => t.count).join(", ")}` },
    b.trend.map((t) => {
      const bar = el("span", { class: "bar", title: `${t.run_id}: ${t.count}`, text: t.count });
      bar.style.height = `${12 + (t.count / widest) * 24}px`;
      return bar;
    }))))));
  if (!board.board.length) {
    $("#board").append(el("tr", {}, el("td", { colSpan: 4, text: "No shame recorded yet." })));
  }
  $("#shame-rows").replaceChildren(...board.rows.map((r) => el("tr", { "data-kind": r.kind },
    el("td", {}, el("a", { href: `/?run=${encodeURIComponent(r.run_id)}`, text: r.run_id })),
    el("td", { text: r.kind }),
    el("td", { text: r.event_type }),
    el("td", { text: short(r.subject_id, 30) }),
    el("td", {}, badge(r.source), " ", short(r.detail, 160)))));
  document.body.dataset.ready = "true";
}

// -- Executions and Decisions: a run picked, its snapshot shown, refreshed while it is live ------

async function runPicker() {
  const { runs } = await api("GET", "/api/runs");
  const pick = $("#run-pick");
  pick.replaceChildren(...runs.map((r) => el("option", { value: r.run_id,
    text: `${r.run_id} (${r.status})` })));
  const wanted = runFromUrl();
  if (wanted && runs.some((r) => r.run_id === wanted)) pick.value = wanted;
  pick.addEventListener("change", () => {
    location.search = `?run=${encodeURIComponent(pick.value)}`;
  });
  return pick.value || null;
}

async function executionsPage() {
  const runId = await runPicker();
  const view = new RunView(render);
  function render() {
    const { open } = view.status();
    $("#gates").replaceChildren(...open.map((g) => el("li", { "data-gate": g.key },
      `Step ${g.value.index}: ${g.value.gate} (paused at ${g.value.paused_at}) `, badge(g.source), " ",
      el("button", { type: "button", "data-release": "resume", text: "Release: resume" }), " ",
      el("button", { type: "button", "data-release": "step", text: "Release: step one package" }))));
    if (!open.length) $("#gates").append(el("li", { text: "No gate is paused." }));
    const { packageGates } = view.status();
    $("#package-gates").replaceChildren(...packageGates.map((g) => el("li", { "data-package-gate": g.key },
      `Package ${g.value.package_id}: ${g.value.gate}${g.value.index !== null ? ` (action ${g.value.index})` : ""} `,
      badge(g.source), " ",
      el("button", { type: "button", "data-release-package": g.key, text: "Release this gate" }))));
    if (!packageGates.length) $("#package-gates").append(el("li", { text: "No package is paused." }));
    $$("[data-release-package]").forEach((b) => b.addEventListener("click", async () => {
      const id = encodeURIComponent(view.snapshot.run_id);
      await api("POST", `/api/runs/${id}/release`, { gate: b.dataset.releasePackage });
    }));
    $$("[data-release]").forEach((b) => b.addEventListener("click", async () => {
      const id = encodeURIComponent(view.snapshot.run_id);
      await api("POST", `/api/runs/${id}/${b.dataset.release}`, b.dataset.release === "resume" ? {} : undefined);
    }));
    const executions = view.get("execution").sort((a, b) => a.seq - b.seq);
    $("#executions").replaceChildren(...executions.map((e) => el("tr", { "data-execution": e.value.name },
      el("td", { text: e.value.machine }),
      el("td", {}, value(short(e.value.name, 40), e.source)),
      el("td", {}, value(e.value.status, e.source)),
      el("td", {}, value(e.value.current.join(" › "), e.source)),
      el("td", {}, value(e.value.entered.length, e.source), " ", badge(e.source)))));
  }
  if (runId) await view.load(runId);
  render();
  document.body.dataset.ready = "true";
}

async function decisionsPage() {
  const runId = await runPicker();
  const view = new RunView(render);
  function render() {
    const byPackage = {};
    for (const e of view.get("decision")) (byPackage[e.value.package_id] ||= []).push(e);
    const root = $("#packages");
    root.replaceChildren();
    for (const [pkg, decisions] of Object.entries(byPackage)) {
      decisions.sort((a, b) => a.value.recorded_at.localeCompare(b.value.recorded_at)
        || a.value.index - b.value.index);
      const heading = el("h2", { id: pkg, text: `Package ${pkg}` });
      root.append(heading, table(
        ["Stage", "Lane", "Disposition", "Target", "Confidence", "Threshold", "Samples (valid)",
          "Votes", "Model", "Why", "Read"],
        decisions.map((e) => el("tr", { "data-decision": e.key },
          el("td", {}, value(e.value.stage, e.source)),
          el("td", {}, value(e.value.lane, e.source)),
          el("td", {}, value(e.value.disposition, e.source)),
          el("td", {}, value(e.value.target_wo_id, e.source)),
          el("td", {}, value(Number(e.value.confidence).toFixed(2), e.source)),
          el("td", {}, value(e.value.threshold, e.source)),
          el("td", {}, value(`${e.value.samples} (${e.value.valid_samples})`, e.source)),
          el("td", {}, value(Object.entries(e.value.votes || {}).map(([k, n]) => `${k}: ${n}`).join("; "),
            e.source)),
          el("td", {}, value(e.value.model, e.source)),
          el("td", {}, value(short(e.value.reason, 140), e.source)),
          el("td", {}, badge(e.source)))),
        `Decisions of package ${pkg}`));
    }
    if (!Object.keys(byPackage).length) root.append(el("p", { text: "No decision read yet." }));
  }
  if (runId) await view.load(runId);
  render();
  document.body.dataset.ready = "true";
}

async function woPage() {
  const params = new URLSearchParams(location.search);
  const runId = params.get("run");
  const woId = params.get("wo");
  $("#wo-where").textContent = `${woId} in run ${runId}`;
  const { events } = await api("GET", `/api/runs/${encodeURIComponent(runId)}/reads?kind=wo&key=${encodeURIComponent(woId)}`);
  const last = events[events.length - 1];
  if (last) {
    $("#wo").replaceChildren(table(["Field", "Value", "Read"],
      Object.entries(last.value).map(([k, v]) => el("tr", {},
        el("th", { scope: "row", text: k }),
        el("td", {}, value(typeof v === "object" && v !== null ? JSON.stringify(v) : v, last.source)),
        el("td", {}, badge(last.source)))), `${woId} as last read`));
  }
  $("#wo-reads").replaceChildren(...events.map((e) => el("li", {}, badge(e.source),
    ` at ${e.read_at}: ${e.value.status}, version ${e.value.version}`)));
  const ledger = await api("GET", `/api/runs/${encodeURIComponent(runId)}/reads`);
  $("#wo-ledger").replaceChildren(...ledger.events
    .filter((e) => (e.kind === "evidence" || e.kind === "shame") && e.value.wo_id === woId)
    .map((e) => el("li", { class: e.kind }, badge(e.source), ` ${e.value.kind || e.value.verdict}: `,
      `${e.value.event_type} ${e.value.detail}`)));
  document.body.dataset.ready = "true";
}

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  ({ evals: evalsPage, runs: runsPage, shame: shamePage, executions: executionsPage,
    decisions: decisionsPage, wo: woPage })[page]?.();
});
