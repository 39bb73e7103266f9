"""The wheel's build hook (.ci/build_hook.py): when it compiles, when it falls back, what it says.

Its decisions, without a build (tests/test_packaging.py builds the wheels and installs them)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    pytest.importorskip("hatchling", reason="hatchling is in the test extra")
    spec = importlib.util.spec_from_file_location("chatnorm_build_hook", ROOT / ".ci" / "build_hook.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pyproject_names_the_hook(hook: ModuleType) -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    hooks = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]
    assert list(hooks) == ["custom"]
    assert hooks["custom"]["path"] == ".ci/build_hook.py"
    assert hook.get_build_hook() is hook.CompiledWhenPossible


def test_a_compile_that_works_is_kept_without_a_word(hook: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHATNORM_BUILD", raising=False)
    monkeypatch.setenv("CC", sys.executable)  # a command that exists: the compile is tried
    ran: list[str] = []
    said: list[str] = []
    assert hook.compile_or_fall_back(lambda: ran.append("compiled"), said.append) is True
    assert (ran, said) == (["compiled"], [])


def test_no_compiler_is_one_line_and_no_compile(hook: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHATNORM_BUILD", raising=False)
    monkeypatch.setenv("CC", "/no/such/cc -pthread")
    ran: list[str] = []
    said: list[str] = []
    assert hook.compile_or_fall_back(lambda: ran.append("compiled"), said.append) is False
    assert ran == []
    assert said == ["chat-normalizer: building the pure-Python wheel: no C compiler ('/no/such/cc -pthread' is not "
                    "found); it behaves the same, slower (normalizer.compiled says which runs)"]


def test_a_failed_compile_is_one_line_naming_the_compiler(hook: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHATNORM_BUILD", raising=False)
    monkeypatch.setenv("CC", "/bin/false")

    def fails() -> None:
        raise Exception("Error while invoking Mypyc:\nrunning build_ext\nbuilding 'x' extension\n"
                        "error: Command '['/bin/false', '-Wsign-compare', '-fPIC', '-I/tmp/x']' failed with exit code 1\n")

    said: list[str] = []
    assert hook.compile_or_fall_back(fails, said.append) is False
    assert said == ["chat-normalizer: building the pure-Python wheel: the compile failed (error: command '/bin/false' "
                    "failed with exit code 1); it behaves the same, slower (normalizer.compiled says which runs)"]


def test_compiled_makes_a_failure_fail_the_build(hook: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHATNORM_BUILD", "compiled")
    monkeypatch.setenv("CC", "/no/such/cc")
    with pytest.raises(RuntimeError, match=r"^CHATNORM_BUILD=compiled, but no C compiler \('/no/such/cc' is not found\)$"):
        hook.compile_or_fall_back(lambda: None, print)
    monkeypatch.setenv("CC", sys.executable)

    def fails() -> None:
        raise OSError("mypy is broken")

    with pytest.raises(OSError, match="^mypy is broken$"):
        hook.compile_or_fall_back(fails, print)


def test_pure_never_compiles_and_says_nothing(hook: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHATNORM_BUILD", "pure")
    monkeypatch.setenv("CC", sys.executable)
    ran: list[str] = []
    said: list[str] = []
    assert hook.compile_or_fall_back(lambda: ran.append("compiled"), said.append) is False
    assert (ran, said) == ([], [])


def test_a_misspelt_choice_is_refused(hook: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHATNORM_BUILD", "compile")
    with pytest.raises(ValueError, match=r"^CHATNORM_BUILD='compile': expected one of auto, compiled, pure$"):
        hook.build_choice()


def test_the_compiler_is_cc_else_the_interpreters(hook: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    import sysconfig

    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: "/no/such/gcc -pthread" if name == "CC" else None)
    assert hook.missing_compiler() == "no C compiler ('/no/such/gcc -pthread' is not found)"
    monkeypatch.setenv("CC", sys.executable)
    assert hook.missing_compiler() is None
    # a compiler that is not a command (MSVC, found by setuptools itself) is tried
    monkeypatch.delenv("CC")
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: None)
    assert hook.missing_compiler() is None


def test_only_an_editable_request_is_told_apart(hook: ModuleType) -> None:
    def get_requires_for_build_editable() -> bool:
        return bool(hook.building_editable())

    def get_requires_for_build_wheel() -> bool:
        return bool(hook.building_editable())

    assert get_requires_for_build_editable() is True
    assert get_requires_for_build_wheel() is False
