"""``pip install .``: the wheel holds every package of the source tree, the shipped models and the PropBank
frame index (with its attribution and licence), and the installed package labels text outside the
repository with them (lisa_tf.packages.finding.SHIPPED, data_pipeline.frame_index.DEFAULT_FRAME_INDEX)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile

from tests.conftest import ROOT


def test_the_package_list_is_the_source_tree():
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    found = sorted(str(p.parent.relative_to(ROOT)).replace(os.sep, ".")
                   for top in ("lisa_tf", "lisa_tf_cli", "lisa_tf_spacy", "data_pipeline", "export")
                   for p in (ROOT / top).rglob("__init__.py"))
    assert sorted(listed) == sorted(found + ["lisa_tf.shipped_models", "data_pipeline.propbank_frames",
                                             "data_pipeline.english_word_forms"])


def test_an_installed_wheel_labels_text_with_the_shipped_model(tmp_path):
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    source = tmp_path / "source"  # the files a clone has: the build's scratch files stay out of the checkout
    source.mkdir()
    for name in ("pyproject.toml", "requirements.txt", "requirements-spacy.txt", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for name in ("lisa_tf", "lisa_tf_cli", "lisa_tf_spacy", "data_pipeline", "export", "models", "data/propbank-frames",
                 "data/english-word-forms"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
                            "--quiet", "-w", str(wheels)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-2000:]
    # a clean build: no deprecated licence table, no model directory taken for a package left out
    assert "Warning" not in build.stderr, build.stderr[-2000:]
    [wheel] = wheels.glob("lisa_tf-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for model in ("srl", "parser"):
        assert {f"lisa_tf/shipped_models/{model}/{name}" for name in
                ("model.keras", "card.json", "MODEL_CARD.md", "assets/config.json")} <= set(names)
    assert {f"data_pipeline/propbank_frames/{name}" for name in
            ("frames.json.gz", "ATTRIBUTION", "LICENSE", "README.md")} <= set(names)
    assert {f"data_pipeline/english_word_forms/{name}" for name in
            ("word_forms.json", "ATTRIBUTION", "LICENSE", "README.md")} <= set(names)
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target),
                              str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-2000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LISA_TF_MODELS")}
    env["PYTHONPATH"] = str(target)  # the installed copy only: not the repository
    done = subprocess.run([sys.executable, "-m", "lisa_tf", "predict", "--format", "jsonl", "The cat sat on the mat."],
                          cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    where = subprocess.run([sys.executable, "-c", "import lisa_tf.packages.finding as p; print(p.DEFAULT_SRL)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert where.stdout.strip() == str(target / "lisa_tf" / "shipped_models" / "srl")
    # the frame index the senses' meanings come from is the installed copy, and it loads
    frames = subprocess.run([sys.executable, "-c", "from data_pipeline.frame_index import DEFAULT_FRAME_INDEX as d, "
                             "FrameIndex; print(d); print(FrameIndex.load().roleset('bark.01').name)"],
                            cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert frames.stdout.splitlines() == [str(target / "data_pipeline" / "propbank_frames" / "frames.json.gz"),
                                          "vocalize like a dog"], frames.stderr[-2000:]
    # so is the word-form table the sense lexicon's irregular forms come from
    forms = subprocess.run([sys.executable, "-c", "from data_pipeline.word_forms import DEFAULT_WORD_FORMS as d, "
                            "shipped_word_forms; print(d); print('lent' in shipped_word_forms().inflections('lend'))"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert forms.stdout.splitlines() == [str(target / "data_pipeline" / "english_word_forms" / "word_forms.json"),
                                         "True"], forms.stderr[-2000:]
    assert "sat" in [p["text"] for p in __import__("json").loads(done.stdout)["predicates"]]


def _readme_python_snippet() -> str:
    """The README's Python example (its first ```python block)."""
    text = (ROOT / "README.md").read_text()
    return text.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_snippet_and_the_command_line_work_outside_the_checkout(tmp_path):
    """After the README's set-up (tools/ensure_venv.sh installs the project into .venv, editable), a
    script of one's own and ``python -m lisa_tf`` work in any directory, with no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LISA_TF_MODELS")}
    script = tmp_path / "mine.py"
    script.write_text(_readme_python_snippet())
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[V: sat]" in done.stdout, done.stdout
    listed = subprocess.run([sys.executable, "-m", "lisa_tf", "--help"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=120)
    assert listed.returncode == 0 and "predict" in listed.stdout, listed.stderr[-2000:]

