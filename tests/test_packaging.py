"""What a user installs: the command's name, the sdist and wheel, and types a checker sees."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import normalizer

ROOT = Path(__file__).resolve().parents[1]
DIST = "chat-normalizer"


def installed() -> importlib.metadata.Distribution:
    try:
        return importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{DIST} is not installed (python -m pip install -e .)")


def test_the_only_command_is_chatnorm() -> None:
    scripts = {ep.name: ep.value for ep in installed().entry_points if ep.group == "console_scripts"}
    # never `normalizer`: that name is charset-normalizer's script (and another PyPI project)
    assert scripts == {"chatnorm": "normalizer.cli:main"}


def test_metadata_says_what_the_package_is() -> None:
    meta = installed().metadata
    assert meta["Name"] == DIST
    assert meta["Version"] == normalizer.__version__
    assert meta["License-Expression"] == "MIT"
    assert "Typing :: Typed" in meta.get_all("Classifier", [])


def test_chatnorm_is_ours_beside_charset_normalizer() -> None:
    installed()
    pytest.importorskip("charset_normalizer", reason="charset-normalizer is in the test extra")
    bindir = Path(sys.executable).parent
    chatnorm = shutil.which("chatnorm", path=str(bindir))
    assert chatnorm is not None
    version = subprocess.run([chatnorm, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"chatnorm, version {normalizer.__version__} (pure Python)"
    repaired = subprocess.run(
        [chatnorm, "repair", "-q", str(ROOT / "examples" / "split-turns.jsonl")],
        capture_output=True, text=True, check=True,
    )
    assert len(repaired.stdout.splitlines()) == 10


def hatch_build(target: str, out: Path) -> Path:
    pytest.importorskip("hatchling", reason="hatchling is in the test extra")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", target, "-d", str(out)],
        cwd=ROOT, check=True, capture_output=True,
    )
    (built,) = out.iterdir()
    return built


def test_sdist_holds_everything_the_test_suite_needs(tmp_path: Path) -> None:
    sdist = hatch_build("sdist", tmp_path)
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    for needed in [
        "LICENSE", "README.md", "docs/index.md", "mkdocs.yml", "pyproject.toml", ".ci/run", "examples/split-turns.jsonl",
        "normalizer/py.typed", "tests/conftest.py", "tests/helpers.py", "tests/realdata.py",
        "tests/cli/conftest.py", "tests/formats/conftest.py", "benchmarks/workload.py",
    ]:
        assert needed in names, needed
    tests_here = {str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py")}
    assert tests_here <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_wheel_holds_only_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHATNORM_BUILD", "pure")  # the compiled wheel adds mypyc's shared library at the top
    wheel = hatch_build("wheel", tmp_path)
    with zipfile.ZipFile(wheel) as whl:
        tops = {name.split("/", 1)[0] for name in whl.namelist()}
        assert "normalizer/py.typed" in whl.namelist()
    assert tops == {"normalizer", f"chat_normalizer-{normalizer.__version__}.dist-info"}


def test_a_type_checker_sees_the_installed_package(tmp_path: Path) -> None:
    """An editable install must be visible to mypy (setuptools' import-hook finder is not)."""
    installed()
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    good = tmp_path / "good.py"
    good.write_text(
        "import normalizer\n"
        "n: normalizer.Normalizer = normalizer.Normalizer()\n"
        "out: list[dict[str, object]] = n.feed({'role': 'user', 'content': 'hi'}) + n.close()\n",
        encoding="utf-8",
    )
    bad = tmp_path / "bad.py"
    bad.write_text("import normalizer\nnormalizer.Normalizer().feed()\n", encoding="utf-8")

    def mypy(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", path.name],
            cwd=tmp_path, capture_output=True, text=True,
        )

    passed = mypy(good)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    failed = mypy(bad)
    # the package's own signature is what rejects it: mypy found the installed code
    assert failed.returncode == 1
    assert 'bad.py:2: error: Missing positional argument "message" in call to "feed" of "Normalizer"' in failed.stdout


# -- the build a user gets: compiled where a compiler is, pure where not (.ci/build_hook.py) --------


def hook_includes() -> int:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return len(config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]["include"])


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A brand-new virtual environment, and the sdist unpacked beside it (what a user builds)."""
    work = tmp_path_factory.mktemp("fresh")
    sdist = hatch_build("sdist", work / "dist")
    with tarfile.open(sdist) as tar:
        tar.extractall(work / "src", filter="data")
    (source,) = (work / "src").iterdir()
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    return work / "venv" / "bin", source


def outside(**env: str) -> dict[str, str]:
    """The environment of a process of the fresh venv: the checkout's PYTHONPATH left out."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, **env}


def pip(bindir: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(bindir / "python"), "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, env=outside(**(env or {})), timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def runs(bindir: Path) -> tuple[str, str]:
    """What the installed package says of itself: ``normalizer.compiled``'s length, ``--version``."""
    compiled = subprocess.run([str(bindir / "python"), "-P", "-c", "import normalizer; print(len(normalizer.compiled))"],
                              capture_output=True, text=True, check=True, cwd=bindir, env=outside())
    version = subprocess.run([str(bindir / "chatnorm"), "--version"], capture_output=True, text=True, check=True,
                             env=outside())
    return compiled.stdout.strip(), version.stdout.strip()


def test_installing_the_sdist_compiles_where_a_compiler_is(fresh: tuple[Path, Path]) -> None:
    import sysconfig

    bindir, source = fresh
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or ""
    if not compiler or shutil.which(compiler.split()[0]) is None:
        pytest.skip(f"no C compiler here ({compiler!r})")
    tracked = sorted(p.relative_to(source) for p in source.rglob("*"))
    out = pip(bindir, "install", "-v", str(source))
    assert "building the pure-Python wheel" not in out
    n = hook_includes()
    assert runs(bindir) == (str(n), f"chatnorm, version {normalizer.__version__} (compiled: {n} modules)")
    repaired = subprocess.run([str(bindir / "chatnorm"), "repair", "-q", str(ROOT / "examples" / "split-turns.jsonl")],
                              capture_output=True, text=True, check=True, env=outside())
    assert len(repaired.stdout.splitlines()) == 10
    # hatch-mypyc compiles in place: nothing of it is left in the tree the user built from
    assert sorted(p.relative_to(source) for p in source.rglob("*") if "__pycache__" not in p.parts) == [
        p for p in tracked if "__pycache__" not in p.parts]


def test_without_a_compiler_it_installs_pure_and_says_so_in_one_line(fresh: tuple[Path, Path]) -> None:
    bindir, source = fresh
    out = pip(bindir, "install", "-v", "--force-reinstall", "--no-deps", str(source), env={"CC": "/no/such/cc"})
    said = [line.strip() for line in out.splitlines() if line.strip().startswith("chat-normalizer:")]
    assert said == ["chat-normalizer: building the pure-Python wheel: no C compiler ('/no/such/cc' is not found); it "
                    "behaves the same, slower (normalizer.compiled says which runs)"]
    assert runs(bindir) == ("0", f"chatnorm, version {normalizer.__version__} (pure Python)")


def test_an_editable_install_never_compiles(fresh: tuple[Path, Path]) -> None:
    bindir, source = fresh
    out = pip(bindir, "install", "-v", "--no-deps", "-e", str(source))
    assert "mypy" not in out.lower()  # not even installed into the build environment
    assert [line for line in out.splitlines() if line.strip().startswith("chat-normalizer:")] == []
    assert runs(bindir) == ("0", f"chatnorm, version {normalizer.__version__} (pure Python)")
