import dataclasses
import json
import typing

import pytest

from lisa_tf.config import ConfigError, ExperimentConfig, choices, config_from_dict, load_config


def test_defaults_are_deepatt_paper_settings():
    config = load_config()
    assert (config.model.num_layers, config.model.hidden_size, config.model.num_heads, config.model.filter_size) == (10, 200, 8, 800)
    assert config.train.optimizer == "adadelta" and config.train.rho == 0.95 and config.train.epsilon == 1e-6
    assert config.train.boundaries == [400_000, 500_000] and config.train.values == [1.0, 0.5, 0.25]


def test_file_then_overrides(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[model]\nnum_layers = 4\n[train]\nmax_steps = 50\n[data]\ntest = { wsj = "a", brown = "b" }\n')
    config = load_config(path, ["train.max_steps=7", "model.hidden_size=32", "train.values=[1, 0.5]", "model.syntax=false"])
    assert config.model.num_layers == 4 and config.train.max_steps == 7 and config.model.hidden_size == 32
    assert config.train.values == [1.0, 0.5] and config.model.syntax is False
    from lisa_tf.config import PROJECT_ROOT

    assert config.data.test == {"wsj": str(PROJECT_ROOT / "a"), "brown": str(PROJECT_ROOT / "b")}


@pytest.mark.parametrize(
    "override, fragment",
    [
        ("train.max_step=3", "unknown key train.max_step"),
        ("trian.max_steps=3", "unknown section 'trian'"),
        ("train.max_steps=three", "expected int"),
        ("model.sublayer=gru", "must be one of"),
        ("max_steps=3", "expected section.key=value"),
    ],
)
def test_bad_overrides_say_what_is_wrong(override, fragment):
    with pytest.raises(ConfigError, match=fragment):
        load_config(None, [override])


def test_bad_file_names_the_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[model]\nnum_layers = 'x'\n")
    with pytest.raises(ConfigError, match="bad.toml"):
        load_config(path)


def test_relative_data_paths_in_files_resolve_against_the_project_root(tmp_path, monkeypatch):
    from lisa_tf.config import PROJECT_ROOT

    monkeypatch.chdir(tmp_path)
    config = load_config(PROJECT_ROOT / "configs" / "open" / "lisa.toml", ["data.dev=mine/dev.gz"])
    assert config.data.train == str(PROJECT_ROOT / "data" / "propbank-ewt" / "train.gold_conll.gz")
    assert config.data.test["test"] == str(PROJECT_ROOT / "data" / "propbank-ewt" / "test.gold_conll.gz")
    assert config.data.dev == "mine/dev.gz"  # overrides are taken as typed


def test_unknown_choice_lists_the_valid_ones(tmp_path):
    with pytest.raises(ConfigError) as error:
        load_config(None, ["model.sublayer=gru"])
    assert str(error.value) == "override 'model.sublayer=gru': model.sublayer must be one of ['cnn', 'ffn', 'rnn'], found 'gru'"
    path = tmp_path / "bad.toml"
    path.write_text('[train]\noptimizer = "sgd"\n')
    with pytest.raises(ConfigError, match=r"bad.toml: train.optimizer must be one of \['adadelta', 'nadam'\], found 'sgd'"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"model.kind must be one of .*, found 3"):
        config_from_dict({"model": {"kind": 3}})


def test_choices_come_from_the_field_types():
    assert choices("model", "sublayer") == ("ffn", "rnn", "cnn")
    assert choices("data", "format") == ("conll05", "conll12", "lisa")
    assert choices("train", "mixed_precision") == ("auto", "float32", "mixed_bfloat16", "mixed_float16")
    config = ExperimentConfig()
    for section in ("data", "model", "train"):
        part = getattr(config, section)
        for field in dataclasses.fields(part):
            if typing.get_origin(typing.get_type_hints(type(part))[field.name]) is typing.Literal:
                assert getattr(part, field.name) == choices(section, field.name)[0]
    for value in choices("model", "kind"):
        assert load_config(None, [f"model.kind={value}"]).model.kind == value
    with pytest.raises(ConfigError, match="model.hidden_size is not a choice"):
        choices("model", "hidden_size")
    with pytest.raises(ConfigError, match="unknown key model.sublayers"):
        choices("model", "sublayers")
    with pytest.raises(ConfigError, match="unknown section 'modle'"):
        choices("modle", "sublayer")


def test_saved_dict_round_trips_unchanged():
    config = load_config(None, ["model.kind=lisa", "model.sublayer=cnn", "train.schedule=noam", "data.test={\"a\": \"b\"}"])
    saved = json.loads(json.dumps(dataclasses.asdict(config)))
    rebuilt = config_from_dict(saved)
    assert rebuilt == config and dataclasses.asdict(rebuilt) == saved
    assert config_from_dict(dataclasses.asdict(ExperimentConfig())) == ExperimentConfig()
