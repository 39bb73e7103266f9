"""The stage's merges are linear in what is merged (``_content.merge``, tested in
tests/test_content.py); and its limits name the message index."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from normalizer._errors import LimitExceeded
from normalizer import Normalizer
from normalizer.profiles._stage import MAX_LEADING_SYSTEMS, MAX_MERGED

ROOT = Path(__file__).parents[2]

def _run_child(code: str) -> str:
    # Quadratic merging takes minutes at this size (measured before the fix: 18 s for
    # 1,000 fragments, growing with the square); linear takes well under a second.
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


LINEAR = """
from normalizer.profiles._encode import Spelling
from normalizer.profiles._profiles import PROFILES, make_stage
out = []
stage = make_stage(PROFILES[{profile!r}], Spelling(PROFILES[{profile!r}]), lambda m, notes: out.append((m, notes)))
text = "x" * 20_000
for k in range(4_000):
    stage.feed({{"role": {role!r}, "content": text, "name": f"n{{k % 2}}"}}, [])
    assert out == []
stage.close()
(message, notes), *rest = out
assert message["content"] == "\\n".join([text] * 4_000), "joined"
print(len(rest), message["role"], len(notes))
"""


@pytest.mark.parametrize(
    ("profile", "role", "printed"),
    [
        ("anthropic", "user", "0 user 3999"),  # users of different names merge under alternation
        # leading systems merge into one (and names conflict); then a user placeholder (JT-8: a user is required)
        ("jinja-strict", "system", "1 system 7998"),
    ],
)
def test_4000_fragments_of_20kb_merge_in_linear_time(profile: str, role: str, printed: str) -> None:
    assert _run_child(LINEAR.format(profile=profile, role=role)) == printed


def test_merged_limit_names_the_message_index() -> None:
    # Users of two names alternate: the core keeps them apart (different speakers), the
    # anthropic stage merges them (strict alternation) until the limit. The core holds each
    # user until the next one comes, so the stage sees user k-1 while message k is placed.
    core = Normalizer("anthropic")
    with pytest.raises(LimitExceeded) as caught:
        for k in range(MAX_MERGED + 2):
            core.feed({"role": "user", "content": "x", "name": f"n{k % 2}"})
    assert caught.value.index == MAX_MERGED + 1 and caught.value.limit == "MAX_MERGED"
    assert str(caught.value) == (f"message {MAX_MERGED + 1}: more than {MAX_MERGED} messages merge into one. "
                                 "no real history has that many consecutive turns")


def test_leading_systems_limit_names_the_message_index() -> None:
    core = Normalizer("jinja-strict")
    with pytest.raises(LimitExceeded) as caught:
        for k in range(MAX_LEADING_SYSTEMS + 1):
            core.feed({"role": "system", "content": "x"})
    assert caught.value.index == MAX_LEADING_SYSTEMS and caught.value.limit == "MAX_LEADING_SYSTEMS"
    assert str(caught.value).startswith(f"message {MAX_LEADING_SYSTEMS}: more than {MAX_LEADING_SYSTEMS} leading")
