"""The install adds one import package, ``chunkmill``, mapped from real folders: no symbolic
link in the repository, no top-level ``pipeline``/``jobs``/``tests`` after an editable
install, every module loaded once, and ``python -m chunkmill`` is the command.

No folder shadows the installed package: neither the repository root (no ``chunkmill/``
folder there: the package's own files are in ``src/chunkmill/``) nor the folder holding the
clone, where the clone itself is a folder named ``chunkmill`` (an editable install puts a
tree of links on sys.path, which a regular package beats a namespace portion on). Checked
with a regular and an editable install of this repository into fresh environments, the Ray
engine's workers included."""

from __future__ import annotations

import fcntl
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

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
import chunkmill, chunkmill.chunking
from chunkmill.jobs import run_job
from chunkmill.jobs.cli import main as cli
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
print("policy", policy.Policy is chunkmill.chunking.Policy)
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

    import chunkmill.jobs
    import chunkmill.pipeline

    roots = [Path(chunkmill.pipeline.__file__).parent, Path(chunkmill.jobs.__file__).parent]
    folders = [f.parent for root in roots for f in sorted(root.rglob("__init__.py"))]
    assert len(folders) >= 6
    for folder in folders:
        package = "chunkmill." + ".".join(folder.relative_to(roots[0].parent).parts)
        module = importlib.import_module(package)
        named = set(re.findall(r"\w+", module.__doc__))
        modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
        modules |= {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
        assert modules and modules <= named, (package, sorted(modules - named))


def test_every_rust_folder_map_names_each_of_its_modules():
    """lib.rs and every mod.rs open with a map (``//!``) naming each module of the folder."""
    import re

    for crate in (REPO / "rust" / "core" / "src", REPO / "rust" / "py" / "src"):
        roots = [crate / "lib.rs", *sorted(crate.rglob("mod.rs"))]
        for root in roots:
            folder = root.parent
            doc = "".join(
                line[3:] for line in root.read_text().splitlines() if line.startswith("//!")
            )
            named = set(re.findall(r"\w+", doc))
            modules = {p.stem for p in folder.glob("*.rs") if p.stem not in ("lib", "mod")}
            modules |= {p.name for p in folder.iterdir() if (p / "mod.rs").exists()}
            modules.discard("tests")  # a folder's unit tests, not a module of the map
            assert modules <= named, (str(root.relative_to(REPO)), sorted(modules - named))


def test_the_core_stub_declares_what_the_core_exports():
    """src/chunkmill/_core.pyi names every public name of the compiled module, no more."""
    import ast

    from chunkmill import _core

    tree = ast.parse((REPO / "src" / "chunkmill" / "_core.pyi").read_text())
    declared = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    declared |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    exported = {name for name in dir(_core) if not name.startswith("_")}
    assert declared == exported, (sorted(declared - exported), sorted(exported - declared))


# --- no folder shadows the install -------------------------------------------------------

USE = """
import chunkmill
from chunkmill.jobs.cli import main as cli
table = chunkmill.chunk_texts(["# A\\n\\nalpha"], paths=["a.md"])
print(table.num_rows, chunkmill.__file__)
"""


@pytest.fixture(scope="module")
def installs(tmp_path_factory):
    """Two fresh environments of this repository: ``regular`` (a wheel built from it) and
    ``editable``. Their dependencies come from the environment running the tests (a .pth
    naming its site-packages, whose own .pth files are not run), so nothing is downloaded;
    both builds reuse the compiled core in target/ when it is up to date."""
    root = tmp_path_factory.mktemp("installs")
    # one build at a time: each test process (pytest -n) builds its own, and two builds
    # in the repository's one build/ folder fail on each other's files
    lock = open(tmp_path_factory.getbasetemp().parent / "installs.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        return _installs(root)
    finally:
        lock.close()


def _installs(root: Path) -> dict[str, Path]:
    env = _clean_env()
    wheel = root / "wheel"
    # what an earlier wheel build left half-made in build/ (a build interrupted or failed)
    # makes setuptools fail on files it cannot delete: every build starts from none
    for stale in (REPO / "build").glob("bdist.*"):
        shutil.rmtree(stale, ignore_errors=True)
    _check([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
            "--no-build-isolation", "-w", wheel, REPO], env)  # fmt: skip
    made = {}
    for kind, what in (("regular", [*wheel.glob("chunkmill-*.whl")]), ("editable", ["-e", REPO])):
        venv = root / kind
        _check([sys.executable, "-m", "venv", "--without-pip", venv], env)
        purelib = subprocess.run(
            [venv / "bin/python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        # after the install's own .pth files ("__editable__..." sorts first)
        Path(purelib, "zz_test_dependencies.pth").write_text(
            "\n".join(site.getsitepackages()) + "\n"
        )
        _check([sys.executable, "-m", "pip", "--python", venv / "bin/python", "install",
                "--quiet", "--no-deps", "--no-build-isolation", *what], env)  # fmt: skip
        made[kind] = venv
    return made


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # the interpreter the compiled core was built for (the Makefile exports it; else this
    # one): another one (the new environment's, which pip --python builds with) would make
    # cargo build it again, for a minute
    built_for = os.environ.get("PYO3_PYTHON", sys.executable)
    return {**env, "PYO3_PYTHON": built_for, "PYTHON_SYS_EXECUTABLE": built_for}


def _check(args, env) -> None:
    done = subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def clone_parent(tmp_path_factory):
    """A folder holding the clone as a folder named chunkmill, as the README's clone does."""
    parent = tmp_path_factory.mktemp("parent")
    (parent / "chunkmill").symlink_to(REPO, target_is_directory=True)
    (parent / "use.py").write_text(USE)
    return parent


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["regular", "editable"])
@pytest.mark.parametrize("where", ["repository root", "parent folder", "script in parent"])
def test_no_folder_shadows_the_install(installs, clone_parent, kind, where):
    python = installs[kind] / "bin/python"
    if where == "repository root":
        args, cwd = [python, "-c", USE], REPO
    elif where == "parent folder":
        args, cwd = [python, "-c", USE], clone_parent
    else:
        args, cwd = [python, clone_parent / "use.py"], REPO
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=_clean_env(),
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows, where_from = done.stdout.split()
    assert rows == "1"
    if kind == "regular":
        assert where_from.startswith(str(installs[kind]))
    else:  # the link tree under build/
        assert Path(where_from).resolve() == REPO / "src" / "chunkmill" / "__init__.py"
        assert "__editable__" in where_from


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("kind", ["regular", "editable"])
def test_the_ray_engine_runs_from_the_repository_root(installs, tmp_path, kind):
    """Ray's workers have the driver's working folder on their path: the repository root
    must hold nothing that shadows the install there."""
    done = subprocess.run(
        [installs[kind] / "bin/chunkmill", "run", "sample_data", "--out", tmp_path / "out",
         "--engine", "ray", "--workers", "1"],
        cwd=REPO, env=_clean_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "published" in done.stderr
