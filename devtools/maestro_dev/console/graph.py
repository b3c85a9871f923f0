"""A state machine drawn from its ASL file: nodes, edges, a layered layout, and its SVG.

Nothing is drawn by hand: the states, their kinds and every transition (``Next``, a Choice's
branches and default, each ``Catch``, a Map's item processor) come from the JSON the stack
runs. The page lights a node by its ``data-state`` (the state's name, as Step Functions'
history names it).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from maestro_dev.local.stack import ROOT

MACHINES: dict[str, Path] = {
    "package_pipeline": ROOT / "statemachines" / "package_pipeline.asl.json",
    "work_order": ROOT / "statemachines" / "work_order.asl.json",
    "eval_executor": ROOT / "statemachines" / "eval_executor.asl.json",
}
TITLES = {
    "package_pipeline": "Package pipeline",
    "work_order": "Work order",
    "eval_executor": "Eval executor",
}

NODE_W, NODE_H, GAP_X, GAP_Y, MARGIN = 210, 44, 24, 30, 16
BAND_LAYERS = 8  # layers per band: a long machine is drawn in bands side by side, not one tall
BAND_GAP = 48
EdgeKind = Literal["next", "choice", "default", "catch", "iterate"]


@dataclass(frozen=True)
class Node:
    name: str
    type: str
    parent: str | None  # the Map (or Parallel) it runs inside
    layer: int = 0
    column: int = 0


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: EdgeKind


@dataclass
class Graph:
    machine: str
    start: str
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    band_x: list[int] = field(default_factory=list)  # where each band of layers starts

    def position(self, node: Node) -> tuple[int, int]:
        band, row = divmod(node.layer, BAND_LAYERS)
        return self.band_x[band] + node.column * (NODE_W + GAP_X), MARGIN + row * (NODE_H + GAP_Y)


def _walk(graph: Graph, states: dict[str, Any], parent: str | None, after: str | None) -> None:
    """Add ``states`` (a machine's or a Map's): ``after`` is where an inner terminal state goes
    on to (the Map's own next state)."""
    for name, state in states.items():
        graph.nodes[name] = Node(name=name, type=str(state["Type"]), parent=parent)
    for name, state in states.items():
        targets: list[tuple[str, EdgeKind]] = []
        if "Next" in state:
            targets.append((state["Next"], "next"))
        targets += [(c["Next"], "choice") for c in state.get("Choices", []) if "Next" in c]
        if "Default" in state:
            targets.append((state["Default"], "default"))
        targets += [(c["Next"], "catch") for c in state.get("Catch", [])]
        inner = state.get("ItemProcessor") or state.get("Iterator")
        if inner is not None:
            targets.append((inner["StartAt"], "iterate"))
            _walk(graph, inner["States"], name, state.get("Next"))
        for branch in state.get("Branches", []):
            targets.append((branch["StartAt"], "iterate"))
            _walk(graph, branch["States"], name, state.get("Next"))
        ends = state.get("End") or state["Type"] in ("Succeed",)
        if parent is not None and ends and after is not None:
            targets.append((after, "next"))
        graph.edges += [Edge(name, target, kind) for target, kind in targets]


def load(machine: str) -> Graph:
    definition = json.loads(MACHINES[machine].read_text())
    graph = Graph(machine=machine, start=definition["StartAt"])
    _walk(graph, definition["States"], None, None)
    _layout(graph)
    return graph


def _layout(graph: Graph) -> None:
    """Layers by the longest path from the start over the forward edges (a back edge, one that
    closes a loop, is found by a depth-first walk and left out), columns in declaration order."""
    order = list(graph.nodes)
    out: dict[str, list[str]] = {n: [] for n in order}
    for edge in graph.edges:
        if edge.target in out:
            out[edge.source].append(edge.target)
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}

    def visit(name: str) -> None:  # iterative enough for machines of tens of states
        state[name] = 1
        for target in out[name]:
            if state.get(target) == 1:
                back.add((name, target))
            elif target not in state:
                visit(target)
        state[name] = 2

    visit(graph.start)
    for name in order:
        if name not in state:
            visit(name)
    layer = dict.fromkeys(order, 0)
    for _ in order:  # relax: at most as many rounds as nodes
        changed = False
        for name in order:
            for target in out[name]:
                if (name, target) not in back and layer[target] < layer[name] + 1:
                    layer[target] = layer[name] + 1
                    changed = True
        if not changed:
            break
    columns: dict[int, int] = {}
    for name in order:
        row = layer[name]
        column = columns.get(row, 0)
        columns[row] = column + 1
        node = graph.nodes[name]
        graph.nodes[name] = Node(node.name, node.type, node.parent, row, column)
    bands = max(layer.values()) // BAND_LAYERS + 1
    x = MARGIN
    for band in range(bands):
        graph.band_x.append(x)
        widest = max((n for r, n in columns.items() if r // BAND_LAYERS == band), default=1)
        x += widest * (NODE_W + GAP_X) - GAP_X + BAND_GAP


def _lines(text: str, width: int = 30) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    if len(lines) > 2:
        lines = [lines[0], " ".join(lines[1:])[: width - 1] + "…"]
    return lines


def svg(graph: Graph) -> str:
    """The machine as an inline SVG: a ``<g class="state" data-state=...>`` per state."""
    width = max(graph.position(n)[0] for n in graph.nodes.values()) + NODE_W + MARGIN
    height = max(graph.position(n)[1] for n in graph.nodes.values()) + NODE_H + MARGIN
    parts = [
        f'<svg class="asl" role="img" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" data-machine="{graph.machine}" '
        f'aria-label="{html.escape(TITLES[graph.machine])} state machine, drawn from its ASL file">'
    ]
    for edge in graph.edges:
        if edge.target not in graph.nodes:
            continue
        source, target = graph.nodes[edge.source], graph.nodes[edge.target]
        sx, sy = graph.position(source)
        tx, ty = graph.position(target)
        x1, y1 = sx + NODE_W // 2, sy + NODE_H
        x2, y2 = tx + NODE_W // 2, ty
        if target.layer > source.layer and ty <= sy:  # on into the next band: up and over
            path = f"M{x1},{y1} C{x1},{y1 + 40} {x2},{y2 - 40} {x2},{y2}"
        elif ty <= sy:  # a loop back, or a same-layer hop: out the side
            x1, y1 = sx + NODE_W, sy + NODE_H // 2
            x2, y2 = tx + NODE_W, ty + NODE_H // 2
            mid = max(x1, x2) + 18
            path = f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"
        else:
            path = f"M{x1},{y1} C{x1},{y1 + 20} {x2},{y2 - 20} {x2},{y2}"
        parts.append(f'<path class="edge {edge.kind}" d="{path}"/>')
    for node in graph.nodes.values():
        x, y = graph.position(node)
        name = html.escape(node.name, quote=True)
        inner = " inner" if node.parent else ""
        parts.append(
            f'<g class="state {node.type.lower()}{inner}" data-state="{name}">'
            f"<title>{name} ({node.type})</title>"
            f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="6"/>'
        )
        lines = _lines(node.name)
        for i, line in enumerate(lines):
            line_y = y + NODE_H / 2 + (i - (len(lines) - 1) / 2) * 14 + 4
            parts.append(f'<text x="{x + 8}" y="{line_y:.0f}">{html.escape(line)}</text>')
        parts.append(f'<text class="count" x="{x + NODE_W - 8}" y="{y + 12}"></text></g>')
    parts.append("</svg>")
    return "".join(parts)


def current_states(history: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """From an execution's history: the states it is in now (entered, not yet exited: a Map
    and its running inner state both) and every state it entered, in order."""
    inside: list[str] = []
    entered: list[str] = []
    for event in history:
        if details := event.get("stateEnteredEventDetails"):
            inside.append(details["name"])
            entered.append(details["name"])
        elif (details := event.get("stateExitedEventDetails")) and details["name"] in inside:
            inside.reverse()
            inside.remove(details["name"])
            inside.reverse()
    return inside, entered
