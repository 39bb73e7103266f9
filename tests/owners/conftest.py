"""Which owners to run: the binaries ``.ci/owners.sh`` installs and names in
``CHATNORM_OWNER_CLAUDE``, ``CHATNORM_OWNER_CODEX`` and ``CHATNORM_OWNER_GEMINI`` (``:``-separated,
today's first).

Without them the owner tests skip, saying why; under CI (``CI=true``) they fail instead, so
that the suite cannot pass having judged nothing.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from .drive import ENV_VARS, Owner, owner_binaries, version_of

UNDER_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _missing(kind: str) -> str:
    npm = "" if shutil.which("npm") else " (and npm, which installs them, is not on PATH)"
    return (f"no {kind} owner: {ENV_VARS[kind]} is unset{npm}; run `source .ci/owners.sh && install_owners DIR` "
            f"or `eval \"$(.ci/owners.sh DIR)\"` to install the pinned versions")


def owner_params(kind: str) -> list[Any]:
    """One parameter per binary named, its id ``claude-2.1.332``; or one that skips (fails
    under CI) with the reason when none is named or a named one does not start."""
    params = []
    for path in owner_binaries(kind):
        try:
            owner = Owner(kind, path, version_of(path))
        except (OSError, RuntimeError) as error:
            params.append(pytest.param(f"{path} does not run: {error}", id=f"{kind}-broken"))
            continue
        params.append(pytest.param(owner, id=str(owner)))
    return params or [pytest.param(_missing(kind), id=f"{kind}-missing")]


def need(owner: Owner | str) -> Owner:
    """The owner, or the test skipped (failed under CI) with the reason it has none."""
    if isinstance(owner, str):
        if UNDER_CI:
            pytest.fail(f"CI=true: {owner}", pytrace=False)
        pytest.skip(owner)
    return owner


#: Known defects of the session repair, each as (case id, owner or None for every owner,
#: what is wrong), marked strict xfail: a fixed case fails as XPASS until its line here is
#: removed. None now: the issue-35 cases all pass.
KNOWN_DEFECTS: list[tuple[str, str | None, str]] = []


def known_defect(test_id: str, owner: Owner) -> pytest.MarkDecorator | None:
    """The strict xfail mark of a known defect for this case (``test_id``: the case's id, a
    dash, the owner's) on this owner, or None."""
    case = test_id[: -len(str(owner)) - 1]
    for known, which, reason in KNOWN_DEFECTS:
        if case == known and which in (None, str(owner)):
            return pytest.mark.xfail(strict=True, reason=reason)
    return None
