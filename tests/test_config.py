"""Settings: one name per setting across codecite.toml, the environment, ``Config(...)``
and the typed sub-configs; every tunable defined once; README's table generated."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

import codecite
from codecite.config import GROUPS, TOP_LEVEL, Config, load_config
from codecite.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


def _settings_table():  # scripts/ is not a package
    spec = importlib.util.spec_from_file_location(
        "settings_table", ROOT / "scripts" / "settings_table.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["settings_table"] = module
    spec.loader.exec_module(module)
    return module


def test_each_setting_is_defined_once_in_one_group() -> None:
    names = [f.name for cls in GROUPS.values() for f in dataclasses.fields(cls)]
    assert len(names) == len(set(names)), "a setting name in two groups"
    assert not set(names) & set(TOP_LEVEL)
    assert set(Config.field_names()) == set(names) | set(TOP_LEVEL)
    assert not set(Config.field_names()) & set(GROUPS)  # no setting named like a group


def test_the_same_name_in_a_file_the_environment_and_config(tmp_path: Path) -> None:
    (tmp_path / "codecite.toml").write_text('rrf_k = 25\nllm = "extractive"\nworkers = 2\n')
    config = load_config(tmp_path, environ={"CODECITE_EXPAND_MAX": "7", "CODECITE_STORE": ""})
    assert (config.search.rrf_k, config.answer.llm, config.index.workers) == (25, "extractive", 2)
    assert config.search.expand_max == 7
    flags = load_config(tmp_path, overrides={"rrf_k": 40}, environ={"CODECITE_RRF_K": "35"})
    assert flags.search.rrf_k == 40  # a flag beats the environment, which beats the file
    assert load_config(tmp_path, environ={"CODECITE_RRF_K": "35"}).search.rrf_k == 35
    built = codecite.Config(rrf_k=25, llm="extractive", workers=2, expand_max=7)
    assert built.settings() == config.settings()
    changed = built.replace(answer_max_blocks=4, repo_name="shop")
    assert (changed.answer.answer_max_blocks, changed.repo_name, changed.search.rrf_k) == (
        4,
        "shop",
        25,
    )
    assert built.answer.answer_max_blocks == Config().answer.answer_max_blocks  # replace() copies
    assert Config(**built.settings()).settings() == built.settings()


def test_unknown_settings_are_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "codecite.toml").write_text("answer_max_symbols = 4\n")
    with pytest.raises(ConfigError, match="unknown setting 'answer_max_symbols'"):
        load_config(tmp_path, environ={})
    with pytest.raises(TypeError, match="unknown settings: nope"):
        Config(nope=1)


def test_readme_lists_every_setting_generated_from_the_code() -> None:
    table = _settings_table()
    listed = [name for names, _, _ in table.rows() for name in names]
    assert sorted(listed) == sorted(Config.field_names())
    assert table.main(["--check"]) == 0, "run: python scripts/settings_table.py"


def test_a_retired_answer_setting_is_read_with_a_warning_not_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 38 retired the hand-tuned answer settings: a codecite.toml that still sets
    one keeps working and says the setting does nothing now (a misspelt one is refused)."""
    (tmp_path / "codecite.toml").write_text("abstain_max_absent = 0.5\nrrf_k = 25\n")
    with caplog.at_level("WARNING", logger="codecite.config"):
        config = load_config(tmp_path)
    assert config.search.rrf_k == 25
    assert "'abstain_max_absent' no longer does anything" in caplog.text
    with pytest.raises(ConfigError, match="unknown setting 'abstain_max_absnet'"):
        load_config(tmp_path, overrides={"abstain_max_absnet": 0.5})
