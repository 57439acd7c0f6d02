"""CLI arguments out of range are usage errors (exit 2, a line naming the argument), never a
traceback from a settings model or the database (issue 29). No database is reached: argparse
refuses them first."""

from __future__ import annotations

import pytest

from citeq import cli


@pytest.mark.parametrize("argv, argument", [
    *[(["users", "token", "alice", "--ttl-days", v], "--ttl-days") for v in ("0", "-1", "nan", "inf", "1e9", "x")],
    *[(["users", "create", "alice", "--credits", v], "--credits") for v in ("-5", "1.5", "10000000000")],
    *[(["upload", "alice", "thesis.pdf", "--wait", "--timeout", v], "--timeout") for v in ("nan", "-1", "inf")],
    (["demo", "--threads", "0"], "--threads"),
    (["web", "--port", "70000"], "--port"),
])
def test_an_argument_out_of_range_is_a_usage_error(argv, argument, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)

    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {argument}" in err and "Traceback" not in err


@pytest.mark.parametrize("text, value", [("90", 90.0), ("0.5", 0.5), ("36500", 36500.0)])
def test_a_ttl_in_range_is_taken(text, value):
    args = cli.build_parser().parse_args(["users", "token", "alice", "--ttl-days", text])
    assert args.ttl_days == value
