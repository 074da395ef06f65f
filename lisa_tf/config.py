"""One typed configuration per experiment.

An experiment is a :class:`ExperimentConfig` with three parts — :class:`DataConfig`,
:class:`ModelConfig` and :class:`TrainConfig` — whose defaults equal DeepAtt's paper settings
(Tan et al. 2018, §4 "Model Setup"). Files in ``configs/`` (TOML or JSON) override the defaults,
and the command line overrides the file with ``section.key=value`` pairs, e.g.
``train.max_steps=200``. Behaviour is chosen in plain code from these typed fields, never by
looking names up in tables.

A field with a fixed set of allowed strings is typed ``Literal[...]`` with them (e.g.
``ModelConfig.sublayer``); loading checks every value against its field's type, so a value outside
the choices is an error that lists them. :func:`choices` returns them, e.g. for a command-line
``choices=``.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import pathlib
import tomllib
import typing
from typing import Any, Iterable, Literal, Optional

from data_pipeline.errors import UserError


class ConfigError(UserError):
    """A configuration file or override is wrong: names the key and what was expected."""


@dataclasses.dataclass
class DataConfig:
    """Where the data is and how to read it.

    Attributes:
        format: ``conll05`` (split directory or pasted column file), ``conll12`` (``*.gold_conll``,
            ``*.gold_skel`` or a directory), ``lisa`` (LISA combined format), ``conllu`` (dependency
            trees only: the parser's training data).
        train, dev: paths; ``test``: named test sets, e.g. ``{"wsj": ..., "brown": ...}``.
        parse_train, parse_dev: optional CoNLL-U files with dependency heads aligned to the data.
        embeddings: GloVe text file (any dimension); empty = random initialisation.
        max_train_sentences: use only the first N training sentences (0 = all); for quick runs.
        max_eval_sentences: likewise for dev/test evaluation during training.
        frames: the PropBank frame index (:mod:`data_pipeline.frame_index`) whose rolesets and roles a
            model with a sense head decodes with (:mod:`lisa_tf.decoding.sense_choice`); empty = the shipped
            one (``data/propbank-frames/frames.json.gz``).
    """

    format: Literal["conll05", "conll12", "lisa", "conllu"] = "conll05"
    train: str = ""
    dev: str = ""
    test: dict[str, str] = dataclasses.field(default_factory=dict)
    parse_train: str = ""
    parse_dev: str = ""
    embeddings: str = ""
    max_train_sentences: int = 0
    max_eval_sentences: int = 0
    frames: str = ""


@dataclasses.dataclass
class ModelConfig:
    """Model family and sizes. Defaults: DeepAtt-FFN (Tan et al. 2018, §4 "Model Setup").

    Attributes:
        kind: ``deepatt``, ``lisa``, ``sa``, ``selective`` or ``parser`` (the Dozat & Manning
            dependency parser, :mod:`lisa_tf.models.parser`).
        embedding_size: word embedding width (100 in the papers; the shipped GloVe subset has 50).
        hidden_size: model width d; ``num_heads`` attention heads; ``filter_size`` FFN hidden width.
        num_layers: number of [non-linear, attention] layers N (DeepAtt) / J (LISA).
        sublayer: DeepAtt non-linear sub-layer, ``ffn``, ``rnn`` or ``cnn``.
        residual_dropout, attention_dropout, relu_dropout: dropout *rates*.
        word_dropout: in training, each real word id is replaced by the ``<unk>`` id with this
            probability, in [0, 1) (:mod:`lisa_tf.layers.word_dropout`; one plain rate for every word,
            not Kiperwasser & Goldberg's ``α / (α + count(w))``). The vocabulary holds every training
            word, so without it the ``<unk>`` row that unseen words read at test time is never trained.
            It applies to every word embedding of the model (the SRL encoder's, the predicate
            identifier's, the parser's); the contextual encoder reads the tokens and is not affected.
            0 (default): off, and the model has no such layer (a saved config without the key reads 0).
        label_smoothing: on the SRL softmax (0.1 in both papers' code).
        decode: ``argmax`` or ``viterbi``.
        transition_log_probs: Viterbi adds tag-transition log-probabilities estimated on the training
            data (LISA); otherwise it only forbids invalid BIO transitions.
        scale_embeddings: multiply the input embeddings by √d (DeepAtt's code; for random init).
        predicate_identifier_layers: DeepAtt and Selective Connection: blocks of the word-only
            tagger that finds predicates when none are given (joint POS/predicate labels, as LISA
            §2.3; :mod:`lisa_tf.models.predicate_identifier`), trained with the run; 0 = none (the
            model then labels given predicates only). Needs POS tags in the training data.
        parser_encoder: the parser's encoder, ``bilstm`` (Dozat & Manning 2017, §3.2) or
            ``attention`` (the shared self-attention backbone, sized by ``num_layers``,
            ``hidden_size``, ``num_heads``, ``filter_size``).
        lstm_layers, lstm_size: the parser's BiLSTM: layers and units per direction (paper: 3 × 400).
        char_embedding_size: the parser's character (UTF-8 byte) CNN word features, added to the word
            embedding; 0 = none (the paper's word-only input).
        parser_dropout: the parser's dropout on embeddings (whole words), between LSTM layers and on
            the MLPs (paper: 0.33). The arc and label MLPs are ``parse_mlp_size`` (paper: 500) and
            ``dep_label_mlp_size`` (paper: 100) wide; POS tags are predicted jointly from the encoder.
        contextual: contextual word vectors from a frozen pretrained encoder, mixed over its layers
            (ELMo's scalar mix; the papers' "+ELMo" rows): ``""`` none (default), ``"minilm"``
            (all-MiniLM-L6-v2, ``requirements-contextual.txt``) or a keras-hub BERT preset directory
            (:mod:`lisa_tf.models.contextual`). The predicate identifier does not use them.
        contextual_mode: ``concat`` (next to the word embedding) or ``replace`` (instead of it).
        contextual_pooling: a word's vector is its ``first`` word piece's (default) or the ``mean``
            of its pieces'.
        contextual_trainable: fine-tune the encoder's transformer blocks with the task (default: frozen,
            read from the feature cache). Its learning rate is ``train.encoder_learning_rate_scale`` ×
            the task's, times ``train.layer_decay`` per block below the top one.
        contextual_dropout: the encoder's dropout while it is fine-tuned (BERT's: 0.1).
        contextual_train_embeddings: fine-tune the word-piece, position and segment embeddings too
            (default: frozen; they are half of MiniLM's parameters).
        sense_loss_weight: weight of the sense head's loss (each predicate's PropBank roleset, as
            CoNLL-2009's predicate disambiguation; :mod:`lisa_tf.models.sense_head`) beside the SRL loss;
            the head exists when the training data has a sense column; 0 = no sense head.
    """

    kind: Literal["deepatt", "lisa", "sa", "selective", "parser"] = "deepatt"
    embedding_size: int = 100
    hidden_size: int = 200
    num_heads: int = 8
    filter_size: int = 800
    num_layers: int = 10
    sublayer: Literal["ffn", "rnn", "cnn"] = "ffn"
    residual_dropout: float = 0.2
    attention_dropout: float = 0.1
    relu_dropout: float = 0.1
    word_dropout: float = 0.0
    label_smoothing: float = 0.1
    decode: Literal["argmax", "viterbi"] = "argmax"
    transition_log_probs: bool = False
    scale_embeddings: bool = True
    predicate_identifier_layers: int = 2
    contextual: str = ""
    contextual_mode: Literal["concat", "replace"] = "concat"
    contextual_pooling: Literal["first", "mean"] = "first"
    contextual_trainable: bool = False
    contextual_dropout: float = 0.1
    contextual_train_embeddings: bool = False
    sense_loss_weight: float = 1.0
    # LISA (Strubell et al. 2018, §2-3); layer indices are 0-based.
    pos_layer: int = 2
    parse_layer: int = 4
    parse_attention_layer: int = 5
    parse_head: int = 0
    parse_mlp_size: int = 500
    dep_label_mlp_size: int = 100
    srl_mlp_size: int = 200
    parse_loss_weight: float = 1.0
    dep_label_loss_weight: float = 0.1
    syntax: bool = True
    gold_predicates: bool = False
    # Selective Connection (Park 2019, §3).
    selective: bool = True
    bilstm_encoder: bool = False
    multichannel_loss: Literal["mean", "sum"] = "mean"
    selective_next_input: Literal["state", "module"] = "state"
    selective_shared_connection: bool = True
    selective_shared_classifier: bool = True
    # Dependency parser (Dozat & Manning 2017, §3).
    parser_encoder: Literal["bilstm", "attention"] = "bilstm"
    lstm_layers: int = 3
    lstm_size: int = 400
    char_embedding_size: int = 0
    parser_dropout: float = 0.33


@dataclasses.dataclass
class TrainConfig:
    """Optimiser, schedule, batching and run control. Defaults: DeepAtt (Tan et al. 2018, §4
    "Model Setup").

    Attributes:
        optimizer: ``adadelta`` (DeepAtt) or ``nadam`` (LISA).
        learning_rate, rho, epsilon, beta_1, beta_2: optimiser settings.
        schedule: ``piecewise`` (DeepAtt: lr halved at the boundaries), ``noam``
            (LISA: lr · min(step^-0.5, step · warmup^-1.5)) or ``linear`` (the usual schedule for
            fine-tuning a pre-trained encoder: lr · step / warmup, then down in a line to 0 at
            ``max_steps``; here ``learning_rate`` is the peak).
        boundaries, values: piecewise schedule; values are multipliers of learning_rate.
        warmup_steps: the noam and linear schedules' warm-up.
        clip_norm: global-norm gradient clipping (0 = off).
        batch_tokens: token budget per batch (summed over replicas).
        max_steps, eval_every, patience: run control; a checkpoint is written at every evaluation
            (every ``eval_every`` steps, and at ``max_steps``, where training ends exactly) (patience
            counts evaluations without a dev F1 improvement; 0 = no early stopping).
        max_minutes: wall-clock budget of one ``train`` session in minutes (0 = none): training stops at
            the last evaluation after which another interval would overrun it (``done.json`` records
            ``stopped_at_time_budget``; ``train`` on the run again continues towards ``max_steps``).
        keep_weights: how many of the latest per-evaluation weight files to keep in ``weights/``
            (``step-N.weights.h5``) for checkpoint averaging (``average-checkpoints``); 0 = none.
        mixed_precision: ``auto``, ``float32``, ``mixed_bfloat16`` or ``mixed_float16``.
        strategy: ``auto`` (MirroredStrategy over GPUs, default strategy on CPU), ``mirrored``,
            ``multiworker`` (MultiWorkerMirroredStrategy from TF_CONFIG) or ``default``.
        seed: for initialisation, shuffling and dropout.
        encoder_learning_rate_scale: a fine-tuned contextual encoder's learning rate relative to the
            task layers' (``model.contextual_trainable``).
        layer_decay: layer-wise learning-rate decay of a fine-tuned encoder: block ``k`` of ``L`` (and
            the embeddings, as block 0) learns at ``layer_decay^(L - k)`` × the encoder's rate.
        init: start from this trained model instead of random weights (``train --init``; a packaged
            model or its name, a run directory or a ``.keras`` file of the same ``model`` settings): its
            vocabularies grow by the new data's entries (new rows, the old ones kept) and its weights
            are copied in (:mod:`lisa_tf.training.init_from_model`). "" = none.
    """

    optimizer: Literal["adadelta", "nadam"] = "adadelta"
    learning_rate: float = 1.0
    rho: float = 0.95
    epsilon: float = 1e-6
    beta_1: float = 0.9
    beta_2: float = 0.98
    schedule: Literal["piecewise", "noam", "linear"] = "piecewise"
    boundaries: list[int] = dataclasses.field(default_factory=lambda: [400_000, 500_000])
    values: list[float] = dataclasses.field(default_factory=lambda: [1.0, 0.5, 0.25])
    warmup_steps: int = 8000
    clip_norm: float = 1.0
    batch_tokens: int = 4096
    max_steps: int = 600_000
    eval_every: int = 1000
    patience: int = 0
    max_minutes: float = 0.0
    keep_weights: int = 5
    mixed_precision: Literal["auto", "float32", "mixed_bfloat16", "mixed_float16"] = "auto"
    strategy: Literal["auto", "mirrored", "multiworker", "default"] = "auto"
    seed: int = 1
    encoder_learning_rate_scale: float = 0.05
    layer_decay: float = 0.9
    init: str = ""


@dataclasses.dataclass
class ExperimentConfig:
    """A whole experiment: ``data``, ``model``, ``train`` (see each class)."""

    data: DataConfig = dataclasses.field(default_factory=DataConfig)
    model: ModelConfig = dataclasses.field(default_factory=ModelConfig)
    train: TrainConfig = dataclasses.field(default_factory=TrainConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def save(self, path: str | os.PathLike) -> None:
        """Write the config as JSON, whole or not at all."""
        from lisa_tf.util.atomic_files import write_text

        write_text(path, json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")


def _section_hints(config_class: type, section: str, where: str) -> dict[str, Any]:
    """The field types of ``section`` of ``config_class``'s instances."""
    part = typing.get_type_hints(config_class).get(section)
    if part is None or not dataclasses.is_dataclass(part):
        raise ConfigError(f"{where}: unknown section {section!r}{_did_you_mean(section, ('data', 'model', 'train'))}; "
                          "expected data, model or train")
    return typing.get_type_hints(part)


def _did_you_mean(name: str, known: Iterable[str], prefix: str = "") -> str:
    """`` (did you mean X?)`` for the known name closest to a mistyped ``name``, or nothing."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {prefix}{close[0]}?)" if close else ""


def _unknown_key(where: str, section: str, key: str, hints: dict) -> ConfigError:
    return ConfigError(f"{where}: unknown key {section}.{key}{_did_you_mean(key, hints, f'{section}.')}; "
                       f"expected one of {sorted(hints)}")


def choices(section: str, key: str) -> tuple[str, ...]:
    """The allowed values of ``section.key``, in declaration order (the default first).

    Example:
    ```python
    choices("model", "sublayer")      # ("ffn", "rnn", "cnn")
    ```

    Raises:
        ConfigError: unknown section or key, or a field that is not a choice of strings.
    """
    where = f"choices({section!r}, {key!r})"
    hints = _section_hints(ExperimentConfig, section, where)
    if key not in hints:
        raise _unknown_key(where, section, key, hints)
    hint = hints[key]
    if typing.get_origin(hint) is not Literal:
        raise ConfigError(f"{where}: {section}.{key} is not a choice, found type {getattr(hint, '__name__', hint)}")
    return typing.get_args(hint)


def _coerce(value: Any, hint: Any, where: str, name: str) -> Any:
    """``value`` (from TOML/JSON, or a string from the command line) as type ``hint``.

    ``where`` says where the value came from and ``name`` is its ``section.key``; a ``Literal``
    hint accepts exactly its values.
    """
    origin = typing.get_origin(hint)
    if origin is Literal:
        allowed = typing.get_args(hint)
        if value not in allowed:
            raise ConfigError(f"{where}: {name} must be one of {sorted(allowed)}, found {value!r}")
        return value
    if isinstance(value, str) and hint is not str:
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            if hint is bool and value.lower() in ("true", "false"):
                value = value.lower() == "true"
            else:
                raise ConfigError(f"{where} ({name}): expected {getattr(hint, '__name__', hint)}, found {value!r}") from None
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ConfigError(f"{where} ({name}): expected a list, found {value!r}")
        return [_coerce(v, item, where, name) for v in value]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} ({name}): expected a table of names to paths, found {value!r}")
        return {str(k): str(v) for k, v in value.items()}
    if hint in (int, float, str, bool) and not (type(value) is hint):
        raise ConfigError(f"{where} ({name}): expected {hint.__name__}, found {value!r}")
    return value


def _set(config: ExperimentConfig, section: str, key: str, value: Any, where: str) -> None:
    hints = _section_hints(type(config), section, where)
    if key not in hints:
        raise _unknown_key(where, section, key, hints)
    setattr(getattr(config, section), key, _coerce(value, hints[key], where, f"{section}.{key}"))


PROJECT_ROOT = pathlib.Path(__file__).resolve().parents[1]
_PATH_FIELDS = ("train", "dev", "parse_train", "parse_dev", "embeddings")


def project_path(value: str) -> str:
    """A data path as a config file (or a packaged model's recorded config) writes it: relative paths are
    relative to the project root (``data/...``), so they work from any working directory."""
    return str(PROJECT_ROOT / value) if value and not os.path.isabs(value) else value


def _resolve_data_paths(data: DataConfig) -> None:
    """The data paths of a config file, through :func:`project_path`; paths given as overrides stay as typed."""
    for name in _PATH_FIELDS:
        setattr(data, name, project_path(getattr(data, name)))
    data.test = {k: project_path(v) for k, v in data.test.items()}


def load_config(path: Optional[str | os.PathLike] = None, overrides: Iterable[str] = ()) -> ExperimentConfig:
    """Read a TOML/JSON config (relative data paths resolve against the project root), then apply
    ``section.key=value`` overrides.

    Raises:
        ConfigError: unknown section or key, wrong type, or a value outside the allowed choices.
    """
    config = ExperimentConfig()
    if path is not None:
        path = pathlib.Path(path)
        try:
            text = path.read_text()
        except OSError as error:
            raise ConfigError(f"{path}: cannot read config: {error.strerror}") from error
        try:
            raw = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
        except (json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
            raise ConfigError(f"{path}: not valid {path.suffix[1:].upper()}: {error}") from error
        for section, values in raw.items():
            if not isinstance(values, dict):
                raise ConfigError(f"{path}: top-level {section!r} must be a table")
            for key, value in values.items():
                _set(config, section, key, value, str(path))
        _resolve_data_paths(config.data)
    for item in overrides:
        name, sep, value = item.partition("=")
        section, dot, key = name.partition(".")
        if not sep or not dot:
            raise ConfigError(f"override {item!r}: expected section.key=value, e.g. train.max_steps=200")
        _set(config, section, key, value, f"override {item!r}")
    return config


def config_from_dict(raw: dict[str, Any]) -> ExperimentConfig:
    """Rebuild a config saved by :meth:`ExperimentConfig.save`."""
    config = ExperimentConfig()
    for section, values in raw.items():
        for key, value in values.items():
            _set(config, section, key, value, "saved config")
    return config


# ----------------------------------------------------------------------------------- validation
#: Model kinds whose encoder is LISA's (joint POS/predicate classifier on layer ``pos_layer``).
_LISA_KINDS = ("lisa", "sa")


def _check_type(value: Any, hint: Any, name: str) -> None:
    """``value`` is of field type ``hint`` (configs built in code skip the checks of loading)."""
    origin = typing.get_origin(hint)
    if origin is Literal:
        allowed = typing.get_args(hint)
        if value not in allowed:
            raise ConfigError(f"{name} must be one of {sorted(allowed)}, found {value!r}")
        return
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{name}: expected a list, found {value!r}")
        (item,) = typing.get_args(hint)
        for v in value:
            _check_type(v, item, name)
        return
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise ConfigError(f"{name}: expected a table of names to paths, found {value!r}")
        return
    ok = type(value) is hint or (hint is float and type(value) is int)
    if not ok:
        raise ConfigError(f"{name}: expected {hint.__name__}, found {value!r}")
    if hint is float and not math.isfinite(value):
        raise ConfigError(f"{name}: expected a finite number, found {value!r}")


def _check_range(config: ExperimentConfig, names: Iterable[str], ok, expected: str) -> None:
    """Each ``section.key`` of ``names`` satisfies ``ok(value)``; else an error saying it ``expected``."""
    for name in names:
        section, key = name.split(".")
        value = getattr(getattr(config, section), key)
        if not ok(value):
            raise ConfigError(f"{name} must be {expected}, found {value!r}")


def _at_least(config: ExperimentConfig, low: int, *names: str) -> None:
    _check_range(config, names, lambda value: value >= low, f"at least {low}")


def _positive(config: ExperimentConfig, *names: str) -> None:
    _check_range(config, names, lambda value: value > 0, "greater than 0")


#: ``model`` settings that shape no weight, only how training regularises and weighs its losses: a run that
#: starts from a trained model (``train --init``) may set its own.
TRAINING_ONLY_MODEL_SETTINGS = ("residual_dropout", "attention_dropout", "relu_dropout", "word_dropout",
                                "label_smoothing", "contextual_dropout", "parser_dropout", "parse_loss_weight",
                                "dep_label_loss_weight", "sense_loss_weight")


def _rate(config: ExperimentConfig, *names: str) -> None:
    """Rates and decay factors in [0, 1)."""
    _check_range(config, names, lambda value: 0 <= value < 1, "in [0, 1)")


def _check_model(model: ModelConfig) -> None:
    """The structure the model classes need (:mod:`lisa_tf.models`), checked before any data is read."""
    heads_divide = model.hidden_size % model.num_heads == 0
    # Selective Connection gives each head ceil(d / heads) dimensions (and its predicate identifier
    # takes the most heads up to num_heads that divide d); the other encoders split d evenly.
    if not heads_divide and model.kind != "selective":
        raise ConfigError(f"model.hidden_size ({model.hidden_size}) must be divisible by model.num_heads "
                          f"({model.num_heads})")
    if model.contextual:
        # Imported here: locating the encoder's files needs the models package (config sits below it).
        from lisa_tf.models.contextual import ContextualEncoderError, preset_directory

        try:
            preset_directory(model.contextual)
        except ContextualEncoderError as error:
            raise ConfigError(str(error)) from None
    if model.kind not in _LISA_KINDS:
        return
    last = model.num_layers - 1
    if not 0 <= model.pos_layer <= last:
        raise ConfigError(f"model.pos_layer must be a layer index in 0..{last} (model.num_layers={model.num_layers}), "
                          f"found {model.pos_layer}")
    if model.kind == "lisa" and model.syntax:
        if not 0 <= model.parse_layer < model.parse_attention_layer <= last:
            raise ConfigError(
                "model.parse_layer and model.parse_attention_layer must satisfy 0 <= parse_layer < "
                f"parse_attention_layer <= {last} (the syntax head reads layer parse_layer and replaces an attention "
                f"head of the later layer parse_attention_layer; model.num_layers={model.num_layers}), found "
                f"parse_layer={model.parse_layer}, parse_attention_layer={model.parse_attention_layer}")
        if not 0 <= model.parse_head < model.num_heads:
            raise ConfigError(f"model.parse_head must be a head index in 0..{model.num_heads - 1} "
                              f"(model.num_heads={model.num_heads}), found {model.parse_head}")


def _check_paths(data: DataConfig) -> None:
    for key in ("train", "dev"):
        if not getattr(data, key):
            raise ConfigError(f"data.{key} is empty; give the {key} data (file or directory), e.g. data.{key}=PATH")
    named = [(f"data.{key}", getattr(data, key)) for key in _PATH_FIELDS]
    named += [(f"data.test.{name}", path) for name, path in data.test.items()]
    for name, path in named:
        if path and not os.path.exists(path):
            raise ConfigError(f"{name}: {path}: no such file or directory")


def validate_config(config: ExperimentConfig) -> None:
    """Check a whole experiment before any data is read or anything is written: every field's type,
    the ranges of numbers, the layer structure the model kind needs, and that the data files exist.

    Raises:
        ConfigError: the first problem found, naming its ``section.key`` and what is expected.
    """
    for section in ("data", "model", "train"):
        part = getattr(config, section)
        hints = typing.get_type_hints(type(part))
        for field in dataclasses.fields(part):
            _check_type(getattr(part, field.name), hints[field.name], f"{section}.{field.name}")
    _at_least(config, 0, "data.max_train_sentences", "data.max_eval_sentences")
    _at_least(config, 1, "model.embedding_size", "model.hidden_size", "model.num_heads", "model.filter_size",
              "model.num_layers", "model.parse_mlp_size", "model.dep_label_mlp_size", "model.srl_mlp_size")
    _at_least(config, 0, "model.predicate_identifier_layers", "model.parse_loss_weight", "model.dep_label_loss_weight",
              "model.sense_loss_weight")
    _rate(config, "model.residual_dropout", "model.attention_dropout", "model.relu_dropout", "model.word_dropout",
          "model.label_smoothing", "model.contextual_dropout")
    _check_model(config.model)
    train = config.train
    _positive(config, "train.learning_rate", "train.epsilon", "train.encoder_learning_rate_scale", "train.layer_decay")
    if train.layer_decay > 1:
        raise ConfigError(f"train.layer_decay must be at most 1 (lower blocks learn no faster than the top one), "
                          f"found {train.layer_decay}")
    if config.model.contextual_trainable and not config.model.contextual:
        raise ConfigError("model.contextual_trainable fine-tunes the contextual encoder; set model.contextual "
                          "(e.g. \"minilm\") too")
    _rate(config, "train.rho", "train.beta_1", "train.beta_2")
    _at_least(config, 1, "train.warmup_steps", "train.batch_tokens", "train.max_steps", "train.eval_every")
    _at_least(config, 0, "train.clip_norm", "train.patience", "train.max_minutes", "train.keep_weights",
              "train.seed")
    if train.seed >= 2**32:
        raise ConfigError(f"train.seed must be below 2**32, found {train.seed}")
    if train.schedule == "piecewise":
        if any(b < 1 for b in train.boundaries) or any(a >= b for a, b in zip(train.boundaries, train.boundaries[1:])):
            raise ConfigError(f"train.boundaries must be increasing steps >= 1, found {train.boundaries}")
        if len(train.values) != len(train.boundaries) + 1:
            raise ConfigError(f"train.values needs one more entry than train.boundaries (one multiplier per "
                              f"interval); found {len(train.values)} and {len(train.boundaries)}")
        if not all(v > 0 for v in train.values):
            raise ConfigError(f"train.values must be learning-rate multipliers greater than 0, found {train.values}")
    _check_paths(config.data)
