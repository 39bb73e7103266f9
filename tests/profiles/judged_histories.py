"""The histories the providers' code judges: peers' test cases, the session samples, and
generated agent histories with defects (a fixed, derandomized draw of the property-test
strategies, so the acceptance table is reproducible).

Run ``python tests/profiles/judged_histories.py`` for the acceptance table (each profile x
judge: accepted after repair / total, and before repair).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from provider_code import TEMPLATE_NAMES, TOOL_FREE_TEMPLATES  # noqa: E402
from realdata import HAVE_SAMPLES, PEER_CASES, SAMPLES, sample_files  # noqa: E402

Messages = list[dict[str, Any]]


def peer_histories() -> list[tuple[str, Messages]]:
    """The inputs of the peers' repair tests (hermes, pydantic-ai, ...): ``../shared/peers/cases.json``."""
    if not PEER_CASES.is_file():
        return []
    cases = json.loads(PEER_CASES.read_text(encoding="utf-8"))
    return [(f"peer:{c['name']}", c["input"]) for c in cases]


def sample_histories() -> list[tuple[str, Messages]]:
    """Every conversation of every session sample, read by our readers (unrepaired)."""
    from normalizer.formats import read_conversations

    if not HAVE_SAMPLES:
        return []
    out: list[tuple[str, Messages]] = []
    for path in sample_files("", "**/*.json*"):
        for n, conversation in enumerate(read_conversations(path)):
            messages = [dict(m) for m in conversation.messages]
            if messages:
                out.append((f"sample:{path.relative_to(SAMPLES)}#{n}", messages))
    return out


def generated_histories(n: int = 150) -> list[tuple[str, Messages]]:
    """``n`` histories drawn (derandomized: the same ones every run) from the strategies."""
    from agent_strategies import agent_histories

    drawn: list[Messages] = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(agent_histories)
    def collect(history: Messages) -> None:
        drawn.append(history)

    collect()
    return [(f"generated:{i}", h) for i, h in enumerate(drawn[:n])]


def all_histories() -> list[tuple[str, Messages]]:
    """Every history above that is a chat history (a peer case testing refusal of a message
    without a role is not one: repair refuses it, rightly)."""
    import normalizer

    out = []
    for name, history in peer_histories() + sample_histories() + generated_histories():
        try:
            if not list(normalizer.repair(history)):
                continue  # nothing to send (no messages, or only an orphan result): no request
        except normalizer.InvalidMessage:
            continue
        out.append((name, history))
    return out


@functools.cache
def cached_histories() -> tuple[tuple[str, Messages], ...]:
    """:func:`all_histories`, built once per test session (the template tests share it)."""
    return tuple(all_histories())


def has_parallel_calls(messages: Messages) -> bool:
    """A turn with more than one call: in one message, or over consecutive assistant
    messages, which repair merges into one turn (one model turn stored as several messages:
    ``call_1`` then ``call_1`` again is a turn of two calls, the second renamed)."""
    in_turn = 0
    for message in messages:
        if message.get("role") != "assistant":
            in_turn = 0
            continue
        in_turn += len(message.get("tool_calls") or ())
        if in_turn > 1:
            return True
    return False


def has_images(messages: Messages) -> bool:
    """Any part that is an image (the text-only tokenizer files have no image encoder)."""
    return "image_url" in json.dumps(messages)


def has_tools(messages: Messages) -> bool:
    return any(m.get("role") == "tool" or m.get("tool_calls") for m in messages)


def acceptance(profile: str, judge_name: str, corpus: list[tuple[str, Messages]]) -> tuple[int, int, int, list[tuple[str, str]]]:
    """(accepted after repair, total, accepted before repair, failures after repair)."""
    import normalizer
    from provider_code import judges

    _, judge = judges()[judge_name]
    after = before = 0
    failures: list[tuple[str, str]] = []
    for name, history in corpus:
        if judge(history) is None:
            before += 1
        try:
            repaired = list(normalizer.repair(history, profile=profile))
        except Exception as exc:  # an input our readers accept but the core refuses
            failures.append((name, f"repair raised {exc}"))
            continue
        error = judge(repaired)
        if error is None:
            after += 1
        else:
            failures.append((name, error))
    return after, len(corpus), before, failures


#: The pairs each profile must pass at 100% (test_validators.py), with the histories they are
#: judged on. "no-images": the tokenizer files bundled in mistral-common are text-only.
REQUIRED: list[tuple[str, str, str]] = [
    ("mistral", "mistral-validator-v7", "all"),
    ("mistral", "mistral-validator-v11", "all"),
    ("mistral", "mistral-validator-v13", "all"),
    ("mistral", "mistral-validator-v3", "all"),
    ("mistral", "mistral-encode-v7", "no-images"),
    ("mistral-v3", "mistral-validator-v3", "all"),
    ("mistral-v3", "mistral-encode-v3", "no-images"),
    *(("jinja-strict", f"template-{t}", "tool-free" if t in TOOL_FREE_TEMPLATES else "all")
      for t in ("deepseek-v3.1", "deepseek-v3", "devstral", "gemma3", "mistral-v0.1", "phi3.5", "qwen2.5", "qwen3")),
    ("llama3", "template-llama3.1", "all"),
    ("llama3", "template-llama3.2", "all"),
    ("qwen3", "template-qwen3", "all"),
    ("qwen3", "template-qwen2.5", "all"),
    ("qwen3.5", "template-qwen3.5", "all"),
    ("gemma", "template-gemma2", "tool-free"),
    ("gemma", "template-gemma3", "tool-free"),
    ("mistral-template", "template-mistral-nemo", "all"),
    ("mistral-template", "template-mistral-small-3.2", "all"),
    ("mistral-template", "template-devstral", "all"),
    ("anthropic", "litellm-anthropic", "all"),
    ("bedrock", "litellm-bedrock", "all"),
    ("gemini", "litellm-gemini", "all"),
]

#: Also printed: the pairs no profile is meant to pass, and why (the family profiles exist).
INFORMATIONAL: list[tuple[str, str, str]] = [
    ("mistral", "mistral-encode-v3", "no-images"),  # v3 merges the text/calls split back: mistral-v3
    *(("jinja-strict", f"template-{t}", "tool-free" if t in TOOL_FREE_TEMPLATES else "all")
      for t in ("gemma2", "llama3.1", "llama3.2", "mistral-nemo", "mistral-small-3.2", "qwen3.5")),
    ("default", "template-qwen2.5", "no-parallel"),  # content parts and null: qwen3
    # Retired from REQUIRED (issue 38): default is for OpenAI-compatible servers, which flatten
    # parts and null before their template; a template is judged with its model's profile.
    ("default", "template-llama3.1", "no-parallel"),
]


def selected(history: Messages, which: str) -> bool:
    if which == "tool-free":
        return not has_tools(history)
    if which == "no-parallel":
        return not has_parallel_calls(history)
    if which == "no-images":
        return not has_images(history)
    return True


def main(argv: list[str]) -> None:
    corpus = all_histories()
    pairs = REQUIRED + INFORMATIONAL if not argv else [tuple(a.split(",")) for a in argv]  # profile,judge,set
    verbose = bool(argv)
    print(f"{len(corpus)} histories ({len(peer_histories())} peer cases, {len(sample_histories())} sample "
          f"conversations, {len(corpus) - len(peer_histories()) - len(sample_histories())} generated)")
    print("| profile | judge (real code) | histories | accepted after repair | before repair |")
    print("|---|---|---|---:|---:|")
    for profile, judge_name, which in pairs:
        after, total, before, failures = acceptance(profile, judge_name, [(n, h) for n, h in corpus
                                                                            if selected(h, which)])
        print(f"| {profile} | {judge_name} | {which} | {after} / {total} | {before} |", flush=True)
        if verbose:
            seen: dict[str, int] = {}
            for name, error in failures:
                seen[error[:160]] = seen.get(error[:160], 0) + 1
            for error, count in sorted(seen.items(), key=lambda kv: -kv[1]):
                print(f"    {count:4d}  {error}")


if __name__ == "__main__":
    main(sys.argv[1:])
