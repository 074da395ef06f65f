"""The project's layers (pyproject.toml's import contracts, docs/architecture.md): ``lint-imports`` keeps
them on the tree, and breaks the contract an upward import crosses on a copy of the tree with one
planted."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import ROOT

PACKAGES = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
CONTRACTS = [contract["name"] for contract in
             tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]]
TOP, LIBRARY, ROOT_MODULES = CONTRACTS[0], CONTRACTS[1], CONTRACTS[2]


def lint_imports(directory) -> tuple[int, str]:
    """``lint-imports`` run in ``directory`` (its packages and its pyproject.toml): exit status and
    output, white space made single spaces (the report wraps long contract names)."""
    done = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.exit(lint_imports_command())", "--no-cache", "--no-logo"],
                          cwd=directory, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ""}, capture_output=True,
                          text=True, timeout=120)
    return done.returncode, " ".join((done.stdout + done.stderr).split())


def test_the_tree_keeps_every_contract():
    status, output = lint_imports(ROOT)
    assert status == 0, output
    for name in CONTRACTS:
        assert f"{name} KEPT" in output, output


def _contract_section(text: str) -> str:
    """The ``tool.importlinter`` tables of a pyproject.toml."""
    kept, keep = [], False
    for line in text.splitlines():
        if line.startswith("["):
            keep = "tool.importlinter" in line
        if keep:
            kept.append(line)
    return "\n".join(kept) + "\n"


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory):
    """The packages' Python files and the contracts, copied (nothing else is needed to lint them)."""
    copy = tmp_path_factory.mktemp("tree")
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            target = copy / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    (copy / "pyproject.toml").write_text(_contract_section((ROOT / "pyproject.toml").read_text()))
    return copy


@pytest.mark.parametrize("module, line, contract, report", [
    # the library reaching up into the server package
    ("lisa_tf/decoding/bio_spans.py", "import export.rest_server", TOP, "lisa_tf is not allowed to import export"),
    # the data package reaching up into the library
    ("data_pipeline/spans.py", "from lisa_tf.config import ConfigError", TOP,
     "data_pipeline is not allowed to import lisa_tf"),
    # the circle of old: finding a model by name reaching up to what loads one
    ("lisa_tf/packages/finding.py", "from lisa_tf.models.runs import load_run", LIBRARY,
     "lisa_tf.packages.finding is not allowed to import lisa_tf.models"),
    # labelling reaching up into writing a package (and through it, evaluation)
    ("lisa_tf/labelling/predictor.py", "from lisa_tf.packages import writing", LIBRARY,
     "lisa_tf.labelling is not allowed to import lisa_tf.packages.writing"),
], ids=["library-to-export", "data-to-library", "finding-to-loading", "labelling-to-writing"])
def test_a_planted_upward_import_breaks_its_contract(tree_copy, module, line, contract, report):
    path = tree_copy / module
    original = path.read_text()
    path.write_text(original + f"\n{line}  # planted\n")
    try:
        status, output = lint_imports(tree_copy)
    finally:
        path.write_text(original)
    assert status == 1, output
    assert f"{contract} BROKEN" in output and report in output, output
    assert f"Contracts: {len(CONTRACTS) - 1} kept, 1 broken." in output, output


def test_a_module_without_a_floor_breaks_the_root_contract(tree_copy):
    """A new module at lisa_tf's root that the layers do not name would be checked by no contract."""
    path = tree_copy / "lisa_tf" / "helpers.py"
    path.write_text('"""A module the contracts do not name."""\n')
    try:
        status, output = lint_imports(tree_copy)
    finally:
        path.unlink()
    assert status == 1, output
    assert f"{ROOT_MODULES} BROKEN" in output and "lisa_tf.helpers" in output, output
