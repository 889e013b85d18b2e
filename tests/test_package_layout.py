"""The install adds one import package, ``chunkmill``, mapped from real folders: no symbolic
link in the repository, no top-level ``pipeline``/``jobs``/``tests`` after an editable
install, every module loaded once, and ``python -m chunkmill`` is the command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_the_repository_holds_no_symbolic_link():
    listed = subprocess.run(
        ["git", "ls-files", "-s"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert listed  # a checkout with its index
    links = [line.split("\t", 1)[1] for line in listed if line.startswith("120000")]
    assert links == []


def test_only_chunkmill_is_importable_and_each_module_loads_once(tmp_path):
    code = """
import importlib, sys
import chunkmill, chunkmill.api
from chunkmill.jobs import cli, run_job
from chunkmill.pipeline import policy, chunk
for name in ("pipeline", "jobs", "tests", "mdchunk"):
    try:
        importlib.import_module(name)
        print("importable", name)
    except ImportError:
        pass
files = {}
for name, module in list(sys.modules.items()):
    where = getattr(module, "__file__", None)
    ours = name.startswith(("chunkmill", "pipeline", "jobs"))
    if where and ours and "/site-packages/" not in where:
        files.setdefault(where, []).append(name)
for where, names in files.items():
    if len(names) > 1:
        print("twice", where, names)
print("policy", policy.Policy is chunkmill.api.Policy)
"""
    done = _python(code, tmp_path)  # not the repository: its folder would be on sys.path
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == ["policy True", ""]


def test_python_m_chunkmill_is_the_command(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "chunkmill", "--help"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "chunkmill" in done.stdout and "run" in done.stdout


def test_every_package_docstring_names_each_of_its_modules():
    import importlib
    import re

    for package in ("chunkmill.pipeline", "chunkmill.pipeline.runstore", "chunkmill.jobs"):
        module = importlib.import_module(package)
        folder = Path(module.__file__).parent
        named = set(re.findall(r"\w+", module.__doc__))
        modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
        modules |= {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
        assert modules and modules <= named, (package, sorted(modules - named))
