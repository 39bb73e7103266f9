"""The wheel's build hook: the compiled build when this machine can make it, else the pure one.

pyproject.toml names this file (``[tool.hatch.build.targets.wheel.hooks.custom]``). Building a
wheel (``pip install .``, ``pip wheel .``, an sdist installed from PyPI, cibuildwheel) compiles
the modules the hook's ``include`` lists with mypyc (through hatch-mypyc's own hook) when a C
compiler is found, and otherwise, or when the compile fails, builds the pure-Python wheel and
says so in ONE line (the same behaviour, slower; ``normalizer.compiled`` tells which runs).
An editable install (``pip install -e .``) is never compiled: the dev loop imports the sources
it edits, and needs neither mypy nor a compiler in its build environment.

``CHATNORM_BUILD`` chooses: ``auto`` (the default, as above), ``compiled`` (a failure to
compile fails the build: cibuildwheel and ``.ci/compiled`` must not ship a pure wheel by
accident) or ``pure`` (never compile).

hatch-mypyc builds in place (the ``.so`` files land next to the sources, where ``pip install
.`` builds: in the user's checkout); ``finalize`` removes them once the wheel holds them, so
a later editable install or ``PYTHONPATH`` run never imports a stale compiled module.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: What the build does: ``auto``, ``compiled`` or ``pure`` (module docstring).
BUILD_ENV = "CHATNORM_BUILD"
BUILD_CHOICES = ("auto", "compiled", "pure")
#: How the fallback line starts (tests/test_packaging.py looks for it).
FALLBACK = "chat-normalizer: building the pure-Python wheel"


def build_choice() -> str:
    """``CHATNORM_BUILD``, checked (a typo must not silently ship the wrong build)."""
    choice = os.environ.get(BUILD_ENV, "auto").strip().lower() or "auto"
    if choice not in BUILD_CHOICES:
        raise ValueError(f"{BUILD_ENV}={choice!r}: expected one of {', '.join(BUILD_CHOICES)}")
    return choice


def missing_compiler() -> str | None:
    """Why no C compiler can be run, or None when one can (or when it cannot be told here:
    a compiler that is not a command, such as MSVC found through the registry, is tried).

    setuptools compiles with ``$CC`` when it is set, else with the interpreter's own (the
    ``CC`` of ``sysconfig``: ``gcc -pthread`` on most Linux builds, ``clang`` on macOS)."""
    configured = os.environ.get("CC") or sysconfig.get_config_var("CC")
    if not configured:
        return None
    words = shlex.split(configured)
    if not words or shutil.which(words[0]) is None:
        return f"no C compiler ({configured!r} is not found)"
    return None


def building_editable() -> bool:
    """Whether pip is asking for an editable install's build requirements.

    ``get_requires_for_build_editable`` and ``..._wheel`` ask the same hook for its
    dependencies, with nothing to tell them apart but the caller: an editable install must not
    pull mypy and setuptools into its build environment for a compile it will never run."""
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name in ("get_requires_for_build_editable", "build_editable"):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def one_line(exc: BaseException) -> str:
    """The last line of a failure that names it (mypyc's output is hundreds of lines), with a
    compiler's command line cut to the compiler (setuptools quotes its whole argv)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    named = [line for line in lines if "error" in line.lower()]
    text = (named or lines or [type(exc).__name__])[-1]
    text = re.sub(r"Command '\[('[^']*').*\]' failed", r"command \1 failed", text)
    return text if len(text) <= 160 else text[:157] + "..."


def compile_or_fall_back(compile_modules: Callable[[], None], say: Callable[[str], None]) -> bool:
    """Run the compile; True when it succeeded. In ``auto`` a failure is one line through
    ``say`` and False (the wheel is then the pure one); in ``compiled`` it is raised."""
    choice = build_choice()
    if choice == "pure":
        return False
    reason = missing_compiler()
    if reason is None:
        try:
            compile_modules()
            return True
        except Exception as exc:  # any failure of mypy, mypyc or the compiler: the pure wheel works
            if choice == "compiled":
                raise
            reason = f"the compile failed ({one_line(exc)})"
    elif choice == "compiled":
        raise RuntimeError(f"{BUILD_ENV}=compiled, but {reason}")
    say(f"{FALLBACK}: {reason}; it behaves the same, slower (normalizer.compiled says which runs)")
    return False


class CompiledWhenPossible(BuildHookInterface):  # type: ignore[type-arg]
    """hatch-mypyc's hook, run when a compile can be tried, and forgiven when it fails."""

    PLUGIN_NAME = "custom"

    def dependencies(self) -> list[str]:
        # Only what a compile needs, only when one will be tried (hatchling asks before the
        # build): the hook's `compile-dependencies`, and the project's own dependencies, which
        # mypy reads as it reads the whole package.
        if building_editable() or build_choice() == "pure" or missing_compiler() is not None:
            return []
        return [*self.config.get("compile-dependencies", []), *self.metadata.core.dependencies]

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        self._mypyc: Any = None
        if version == "editable" or self.target_name != "wheel":
            return
        compiled = compile_or_fall_back(lambda: self._compile(version, build_data), self._say)
        if not compiled:
            self._mypyc = None

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._mypyc is not None:
            self._mypyc.clean([version])  # the wheel holds them; the checkout must not

    def _compile(self, version: str, build_data: dict[str, Any]) -> None:
        try:
            from hatch_mypyc.plugin import MypycBuildHook
        except ImportError as exc:  # a build without isolation, in an environment without it
            raise RuntimeError(f"hatch-mypyc is not installed: {exc}") from None
        self._mypyc = MypycBuildHook(self.root, self.config, self.build_config, self.metadata, self.directory,
                                     self.target_name, self.app)
        try:
            with tempfile.TemporaryDirectory() as cache, _environ("MYPY_CACHE_DIR", cache):
                # (mypy's cache, else a .mypy_cache folder in the user's tree)
                self._mypyc.initialize(version, build_data)  # adds to build_data only once it succeeded
        except BaseException:
            self._mypyc.clean([version])  # what a half-done compile left next to the sources
            raise

    def _say(self, line: str) -> None:
        self.app.display_warning(line)


@contextlib.contextmanager
def _environ(name: str, value: str) -> Iterator[None]:
    """``os.environ[name]`` is ``value`` inside (the compile runs in a child process)."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def get_build_hook() -> type[BuildHookInterface]:  # type: ignore[type-arg]
    """What hatchling loads from this file (the only hook in it)."""
    return CompiledWhenPossible
