"""A run option is declared once (chunkmill.jobs.options): the command's flags, the
Python keywords and the run all come from the same fields."""

from __future__ import annotations

from dataclasses import fields

import pytest

import chunkmill
from chunkmill.jobs.cli import main as cli
from chunkmill.jobs.cli import run as run_cli
from chunkmill.jobs.options import InputOptions, RunOptions
from chunkmill.pipeline.policy import Policy


def _params(command) -> set[str]:
    return {p.name for p in command.params}


def test_every_run_option_and_policy_field_is_a_flag_of_run():
    wanted = {f.name for f in fields(RunOptions)} | {f.name for f in fields(Policy)}
    assert wanted <= _params(run_cli.run_cmd)
    assert _params(run_cli.run_cmd) - wanted == {"inputs", "out", "policy_file", "log_json"}


def test_blocks_takes_the_input_options_and_chunks_the_policy():
    inputs = {f.name for f in fields(InputOptions)}
    assert _params(cli.blocks_cmd) == inputs | {"inputs", "out", "mdx", "bias"}
    assert _params(cli.chunks_cmd) == {f.name for f in fields(Policy)} | {
        "blocks_dir",
        "out",
        "policy_file",
    }


def test_flag_defaults_are_the_fields_defaults():
    by_name = {p.name: p for p in run_cli.run_cmd.params}
    for f in fields(RunOptions):
        if by_name[f.name].multiple:
            assert f.default == ()
        else:
            assert by_name[f.name].default == f.default, f.name
    for f in fields(Policy):  # left out, a policy flag does not override --policy FILE
        assert by_name[f.name].default is None, f.name


def test_the_api_takes_the_fields_and_refuses_other_names(tmp_path):
    with pytest.raises(TypeError, match="unknown option.*no_such_option"):
        chunkmill.run([str(tmp_path)], tmp_path / "out", no_such_option=1)
    assert not (tmp_path / "out").exists()  # refused before any work
