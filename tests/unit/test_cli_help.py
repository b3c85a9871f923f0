"""`maestro --help` as a terminal shows it: the module's words, without RST markup."""

from __future__ import annotations

from maestro_dev.cli import build_parser, plain_text


def test_the_help_shows_commands_without_rst_backticks() -> None:
    text = build_parser().format_help()
    assert "``" not in text
    assert "- maestro serve [--port] [--speed] [--step]: the embedded stack" in text
    assert "release one; on\n  maestro serve (--url, the default)" in text


def test_plain_text_keeps_the_words_and_single_backticks() -> None:
    assert (
        plain_text("run ``maestro\n  step`` or `make demo`") == "run maestro\n  step or `make demo`"
    )


def test_serve_defaults_to_a_speed_at_which_a_text_flows_within_seconds() -> None:
    speed = build_parser().parse_args(["serve"]).speed
    assert 300 / speed <= 10  # the 5-minute idle window, in real seconds
