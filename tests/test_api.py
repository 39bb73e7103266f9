"""The public names: one naming convention, deprecated 0.1 names, ``@repairing``'s colours."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import normalizer

SPLIT = [{"role": "assistant", "content": "A"}, {"role": "assistant", "content": "B"}]
MERGED = [{"role": "assistant", "content": "A\nB"}]


def test_async_functions_have_the_a_prefix_and_async_classes_the_async_prefix() -> None:
    for name in normalizer.__all__:
        value = getattr(normalizer, name)
        if inspect.isclass(value):
            is_async = hasattr(value, "__aiter__") or hasattr(value, "__anext__")
            assert name.startswith("Async") == is_async, name
        elif inspect.iscoroutinefunction(value) or inspect.isasyncgenfunction(value):
            assert name.startswith("a"), name
            assert name[1:] in normalizer.__all__, f"{name} has no sync twin {name[1:]}"


def test_every_async_twin_is_exported() -> None:
    for name in ("arepair", "aread_messages", "aread_conversations", "acheck", "acheck_iter",
                 "awrite_jsonl", "awrite_json_array", "awrite_finetune", "AsyncRepaired", "AsyncMessageStream",
                 "AsyncConversationStream"):
        assert name in normalizer.__all__, name


@pytest.mark.parametrize(("old", "new"), [
    ("normalize", "arepair"), ("normalize_sync", "repair"),
    ("Normalized", "Repaired"), ("ANormalized", "AsyncRepaired"),
])
def test_the_old_names_still_work_and_say_what_replaces_them(old: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"normalizer\.{old} is deprecated .* use normalizer\.{new}$"):
        value = getattr(normalizer, old)
    assert value is getattr(normalizer, new)
    assert old not in normalizer.__all__


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        normalizer.nope  # noqa: B018


def test_repairing_a_plain_function_gives_a_sync_iterator() -> None:
    @normalizer.repairing
    def load() -> list[dict[str, Any]]:
        return SPLIT

    out = load()
    assert isinstance(out, normalizer.Repaired)
    assert list(out) == MERGED
    assert out.report.counts == {"merge_assistant": 1}


def test_repairing_a_generator_function_gives_a_sync_iterator() -> None:
    @normalizer.repairing(trailing_calls="keep")
    def load() -> Any:
        yield from SPLIT

    assert isinstance(load(), normalizer.Repaired)
    assert list(load()) == MERGED


@pytest.mark.anyio
async def test_repairing_a_coroutine_function_gives_an_async_iterator() -> None:
    @normalizer.repairing
    async def load(n: int) -> list[dict[str, Any]]:
        return SPLIT[:n]

    out = load(2)
    assert isinstance(out, normalizer.AsyncRepaired)
    assert [m async for m in out] == MERGED
    assert out.report.counts == {"merge_assistant": 1}
    assert load.__name__ == "load"


@pytest.mark.anyio
async def test_repairing_an_async_generator_function_gives_an_async_iterator() -> None:
    @normalizer.repairing
    async def load() -> Any:
        for message in SPLIT:
            yield message

    out = load()
    assert isinstance(out, normalizer.AsyncRepaired)
    assert [m async for m in out] == MERGED


@pytest.mark.anyio
async def test_acheck_is_check_over_an_async_iterable() -> None:
    async def messages() -> Any:
        yield {"role": "assistant", "content": "Hi"}

    assert await normalizer.acheck(messages(), profile="bedrock") == normalizer.check(
        [{"role": "assistant", "content": "Hi"}], profile="bedrock")


def test_a_clean_file_read_and_repaired_is_unchanged_and_says_its_format(tmp_path: Any) -> None:
    path = tmp_path / "clean.jsonl"
    normalizer.write_jsonl(MERGED, path)
    stream = normalizer.read_messages(path)
    repaired = normalizer.repair(stream)
    assert list(repaired) == MERGED
    assert (stream.format, stream.report.format) == ("chat", "chat")
    assert (stream.report.changed, repaired.report.changed) == (False, False)
    assert stream.position == normalizer.Position(1, 1)
