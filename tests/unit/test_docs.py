"""The front door stays short and every door in the documents opens (issue #23).

- README.md is at most 200 lines;
- every relative link in README.md, docs/*.md and the folder READMEs names a file that exists,
  and, when it names a heading (``page.md#heading``), a heading that page has;
- every command of the README's quickstart is one the `maestro` CLI parses as written (or a
  make target the Makefile has);
- docs/deploy.md's table of `cdk.json` keys names exactly the fields of ``infra.config.EnvConfig``.

Running the quickstart's commands is tests/e2e/test_quickstart.py's job.
"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest
from readme_quickstart import README, ROOT, quickstart_commands

README_MAX_LINES = 200
# Folders whose READMEs are the project's own (not a venv's, a download's or generated output;
# .venv313 and .cache are `make test-py313`'s).
NOT_OURS = {
    ".venv",
    ".venv313",
    ".cache",
    "node_modules",
    "cdk.out",
    "build",
    "dist",
    ".git",
    ".maestro",
}

# A quickstart step another open issue is building: checked once it exists, skipped until then.
PENDING = {"make console": "issue #22 (the console) is being built"}


def documents() -> list[Path]:
    folder_readmes = [
        path
        for path in ROOT.rglob("README.md")
        if not NOT_OURS & set(path.relative_to(ROOT).parts) and "egg-info" not in str(path)
    ]
    return sorted({README, *ROOT.glob("docs/*.md"), *folder_readmes})


_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The text with its code blocks and code spans blanked: links there are not links."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def links(text: str) -> list[str]:
    return _LINK.findall(_prose(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    heading = heading.strip().lower()
    heading = re.sub(r"[^\w\- ]", "", heading)
    return heading.replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def dead_links(document: Path) -> list[str]:
    dead = []
    for target in links(document.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        linked = (document.parent / path_part).resolve() if path_part else document
        if not linked.exists():
            dead.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            dead.append(f"{target}: no heading #{anchor} in {linked.name}")
    return dead


def test_the_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines; a topic goes to its page in docs/ (docs/README.md lists "
        "them), the README gets at most a link line"
    )


@pytest.mark.parametrize("document", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_opens(document: Path) -> None:
    assert not dead_links(document)


def test_every_docs_page_is_in_the_index() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    listed = {target.partition("#")[0] for target in links(index)}
    missing = sorted(
        page.name
        for page in (ROOT / "docs").glob("*.md")
        if page.name not in listed | {"README.md"}
    )
    assert not missing, f"docs/README.md lists no line for {missing}"


def test_the_link_checker_finds_a_dead_file_and_a_dead_heading(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# A page: its title\n\n## Threads and locks\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#threads-and-locks) [ok](there.md#a-page-its-title)\n"
        "[ok](https://example.com/x.md) `[not a link](nowhere.md)`\n"
        "```\n[not a link](nowhere.md)\n```\n"
        "[dead](gone.md) [dead](there.md#no-such-heading)\n"
    )
    assert dead_links(page) == [
        "gone.md: no such file",
        "there.md#no-such-heading: no heading #no-such-heading in there.md",
    ]


# --- the quickstart -------------------------------------------------------------------------


def make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", makefile, re.M))


def test_the_quickstart_has_its_steps_in_order() -> None:
    commands = quickstart_commands()
    firsts = [
        next(i for i, c in enumerate(commands) if c.startswith(prefix))
        for prefix in (
            "make demo",
            "maestro serve",
            "maestro send",
            "maestro executions",
            "maestro ledger",
            "maestro eval run",
            "make console",
        )
    ]
    assert firsts == sorted(firsts), commands


@pytest.mark.parametrize("command", quickstart_commands())
def test_each_quickstart_command_exists_as_written(command: str) -> None:
    argv = shlex.split(command)
    if argv[0] == "source":
        assert argv[1:] == [".venv/bin/activate"]  # what `make` creates
        return
    if argv[0] == "make":
        if command in PENDING and argv[1] not in make_targets():
            pytest.skip(f"{command}: {PENDING[command]}")
        assert set(argv[1:]) <= make_targets(), f"the Makefile has no target {argv[1:]}"
        return
    assert argv[0] == "maestro", f"not a command the quickstart test knows: {command}"
    from maestro_dev.cli import build_parser

    parser = build_parser()
    parser.exit_on_error = False
    try:
        args = parser.parse_args(argv[1:])
    except SystemExit as exit_:  # a subparser's error exits even without exit_on_error
        pytest.fail(f"`{command}` does not parse: exit {exit_.code}")
    assert callable(getattr(args, "handler", None)), f"`{command}` names no command"


# --- the deploy page's cdk.json keys --------------------------------------------------------


def env_config_fields() -> set[str]:
    tree = ast.parse((ROOT / "infra" / "config.py").read_text(encoding="utf-8"))
    (cls,) = (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "EnvConfig")
    return {
        node.target.id
        for node in cls.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    } - {"name", "model_config"}


def test_the_deploy_page_names_every_cdk_json_key_and_no_other() -> None:
    text = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    section = text.split("## Per-environment settings", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    documented = {key for row in rows for key in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert documented == env_config_fields()
