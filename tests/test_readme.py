"""The README and the documentation pages (``docs/*.md``) run as written.

- Every ``python`` block is executed on its own, in a fresh namespace, in a scratch folder
  that holds a copy of ``examples/``; a plain block right after it is the output it prints.
- Every ``console`` block is a transcript: each ``$ command`` is run with bash there, and
  what it prints (stdout and stderr together) must match the lines below it. A line ``...``
  stands for any number of lines; timings (``0.01 s``) match any timing.
- Every ``sh`` block's commands are run there and must succeed, except the set-up block,
  whose test command must be the one ``.ci/run`` runs.
- The state diagram is rendered from the machine itself.
- The README stays short (under 300 lines), and the site's nav lists every page.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from normalizer._state import diagram

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The documents whose blocks run: the README, then every page of the site, by name.
DOCUMENTS = ["README.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))
SETUP_TEST_COMMAND = "python -m pip install -e '.[test,judges]' && python -m pytest"
TIMING = re.compile(r"\b\d+\.\d\d s\b")


@dataclass(frozen=True, slots=True)
class Block:
    document: str  # its path from the checkout: README.md, docs/cli.md
    lang: str
    body: str
    line: int  # 1-based line of the opening fence
    output: str | None  # the plain block right after a python block, if any

    @property
    def id(self) -> str:
        return f"{self.document}:{self.line}"


def blocks(document: str) -> list[Block]:
    text = (ROOT / document).read_text(encoding="utf-8")
    found: list[Block] = []
    fence = re.compile(r"^```([\w-]*)\n(.*?)^```\n", re.S | re.M)
    matches = list(fence.finditer(text))
    for i, m in enumerate(matches):
        lang, body = m.group(1), m.group(2)
        output = None
        nxt = matches[i + 1] if i + 1 < len(matches) else None
        if lang == "python" and nxt is not None and nxt.group(1) == "" and nxt.start() == m.end():
            output = nxt.group(2)
        found.append(Block(document, lang, body, text.count("\n", 0, m.start()) + 1, output))
    return found


BLOCKS = [block for document in DOCUMENTS for block in blocks(document)]


def of(lang: str, document: str | None = None) -> list[Block]:
    return [b for b in BLOCKS if b.lang == lang and document in (None, b.document)]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    # "Plug it into your framework" builds agents on OpenAI models, as a user with a key set
    # does (nothing is sent); LiteLLM reads its price map from its own package, not the network.
    monkeypatch.setenv("OPENAI_API_KEY", os.environ.get("OPENAI_API_KEY") or "sk-readme-never-sent")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return tmp_path


def shell_env() -> dict[str, str]:
    """The environment a user's shell has after the README's install: ``chatnorm`` and
    ``python`` are this interpreter's."""
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "COLUMNS": "100", "NO_COLOR": "1"}


def require_chatnorm() -> None:
    if shutil.which("chatnorm", path=shell_env()["PATH"]) is None:
        pytest.skip("the chatnorm command is not installed (python -m pip install -e .)")


def matches(expected: str, actual: str) -> bool:
    """``actual`` fits ``expected``, where an expected line ``...`` spans any lines."""
    pattern = []
    for line in expected.rstrip("\n").split("\n"):
        if line == "...":
            pattern.append(r"(?:.*\n)*?")
        else:
            pattern.append(r"\d+\.\d\d s".join(map(re.escape, TIMING.split(line))) + r"\n")
    return re.fullmatch("".join(pattern), actual.rstrip("\n") + "\n") is not None


def test_readme_has_blocks_of_each_kind() -> None:
    assert len(of("python")) >= 6
    assert len(of("console")) >= 4
    assert of("mermaid")
    assert of("python", "README.md") and of("console", "README.md")


def test_readme_is_short() -> None:
    assert README.count("\n") < 300


def test_the_site_lists_every_page() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = re.findall(r"^  - [^:\n]+: (\S+\.md)$", config, re.M)
    assert sorted(nav) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert "\nstrict: true\n" in config


#: A block that needs a framework or judge not installed (the quick loop's light `[test]`,
#: or .ci/floors, whose venv holds the package and the test runner at their floors and none of
#: the judges) is skipped, with the module named. Under CI (CI=true) outside the floors step,
#: where everything is installed, a missing module fails the block.
MISSING_FAILS = os.environ.get("CI", "").lower() in ("1", "true", "yes") and os.environ.get("CHATNORM_FLOORS") != "1"


@pytest.mark.parametrize("block", of("python"), ids=lambda b: b.id)
def test_python_block_runs(block: Block, scratch: Path) -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            exec(compile(block.body, block.id, "exec"), {"__name__": "__main__"})
        except ModuleNotFoundError as missing:
            top = (missing.name or "").partition(".")[0]
            if MISSING_FAILS or not top or top == "normalizer" or top in sys.stdlib_module_names:
                raise
            pytest.skip(f"{block.id} needs {top}, not installed (pip install -e '.[test,judges]')")
    if block.output is not None:
        assert printed.getvalue().rstrip("\n") == block.output.rstrip("\n")


STEP = "@@readme-step@@"


def transcript(block: Block, cwd: Path) -> list[tuple[str, str, str]]:
    """Each ``$ command`` of a console block as (command, expected, actual).

    The commands run in one bash process, in order, as a user types them: ``$?`` is the
    status of the command before, and files one command writes are there for the next.
    """
    steps = re.split(r"^\$ ", block.body, flags=re.M)
    assert steps[0] == "", f"{block.id}: a console block starts with a '$ ' command"
    parsed = [step.partition("\n")[::2] for step in steps[1:]]
    script = "".join(
        f"__status=$?; printf '%s\\n' '{STEP}'; (exit $__status); {command}\n" for command, _ in parsed
    )
    done = subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=shell_env(),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=300,
    )
    outputs = done.stdout.decode().split(STEP + "\n")[1:]
    assert len(outputs) == len(parsed), done.stdout.decode()
    return [(command, expected, actual) for (command, expected), actual in zip(parsed, outputs)]


@pytest.mark.parametrize("block", of("console"), ids=lambda b: b.id)
def test_console_transcript_is_current(block: Block, scratch: Path) -> None:
    require_chatnorm()
    for command, expected, actual in transcript(block, scratch):
        assert matches(expected, actual), f"{block.id}: `{command}` printed:\n{actual}"


@pytest.mark.parametrize("block", [b for b in of("sh") if "pip install" not in b.body], ids=lambda b: b.id)
def test_shell_commands_work(block: Block, scratch: Path) -> None:
    require_chatnorm()
    for line in block.body.splitlines():
        command = line.split("  #", 1)[0].strip()
        if not command or command.startswith("#"):
            continue
        done = subprocess.run(["bash", "-c", command], cwd=scratch, env=shell_env(), capture_output=True, timeout=120)
        assert done.returncode == 0, f"{block.id}: `{command}` failed: {done.stderr.decode()}"


def test_setup_commands_come_first_and_ci_runs_the_test_command() -> None:
    setup = [b for b in of("sh", "README.md") if "pip install" in b.body]
    assert setup, "README has no set-up block"
    first = setup[0]
    readme = [b for b in BLOCKS if b.document == "README.md" and b.lang in ("sh", "console", "python")]
    assert first is readme[0], "the set-up commands come first"
    commands = [line.split("  #", 1)[0].strip() for line in first.body.splitlines() if line.strip()]
    assert commands == [
        "python -m pip install -e . && chatnorm repair examples/split-turns.jsonl",
        SETUP_TEST_COMMAND,
    ]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pip install --quiet --disable-pip-version-check -e '.[test,judges]'" in ci
    assert "\npython -m pytest\n" in ci


def test_ci_builds_the_docs_strictly() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pip install --quiet --disable-pip-version-check -e '.[docs]'" in ci
    assert '\npython -m mkdocs build --strict --site-dir "$(dirname "$venv")/site"\n' in ci


def test_state_diagram_is_rendered_from_the_machine() -> None:
    mermaid = of("mermaid")
    assert mermaid[0].body.strip() == diagram().strip()


def test_matches_spans_and_timings() -> None:
    assert matches("a\n...\nz 0.00 s\n", "a\nb\nc\nz 1.25 s\n")
    assert not matches("a\nz\n", "a\nb\nz\n")
