"""OpenAI Agents SDK: repair the history a session replays, or every model call's input.

``pip install 'chat-normalizer[agents]'``::

    from agents import Runner, SQLiteSession
    from normalizer.integrations.openai_agents import RepairingSession

    session = RepairingSession(SQLiteSession("user-42", "history.db"))
    result = await Runner.run(agent, "Summarise the repo.", session=session)

A session holds Responses input items. :class:`RepairingSession` wraps any ``Session``: what
``get_items`` returns goes Responses items -> chat messages (:func:`normalizer.formats.from_responses`)
-> :func:`normalizer.repair` -> Responses items (:func:`normalizer.formats.to_responses`), so the
run sees a repaired history while the stored one stays as it was (``rewrite=True`` replaces it
with the repaired one). Every other call goes to the wrapped session unchanged.

:data:`repair_model_input` does the same on each model call, for
``RunConfig(call_model_input_filter=repair_model_input)`` (a history passed as the run's input
rather than through a session); ``profile="auto"`` there takes the agent's model name.

The repair is made on Responses items, and what reaches a Chat Completions provider is what
the SDK's own converter makes of them (``OpenAIChatCompletionsModel``): it puts a message and its
calls back into one assistant message and has no place for a tool message's ``name`` or
``reasoning_content``. Profiles that need those (``mistral``, ``gemini``, ``deepseek``,
``moonshot``, ``xai``) are not fully honoured on that path; ``openai``, ``anthropic``,
``qwen3``, ``llama3``, ``zhipu`` are (checked by the tests). For the others, repair where the
chat messages are built (the LiteLLM callback sees the chat messages LiteLLM sends, e.g. under
the SDK's ``LitellmModel``).

A history holding items with no chat form (a hosted tool's ``web_search_call``...) is handed
over as it is, and the logger ``normalizer.integrations.openai_agents`` says so: repairing it
would lose them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.memory.session_settings import SessionSettings
from agents.run_config import CallModelData, ModelInputData
from typing_extensions import Unpack

from .._report import Report, new_report
from .._types import ProfileArg, RepairOptions
from ..formats._memory import from_responses, to_responses
from ._common import AUTO, LOGGER, AutoProfile, OnReport, log_report, lost_in_reading, repair_chat, resolve_profile

if TYPE_CHECKING:
    from agents import Session, TResponseInputItem

__all__ = ["RepairingSession", "ModelInputRepair", "repair_model_input", "repair_items", "ItemsRepair"]

_LOG = LOGGER.getChild("openai_agents")


@dataclass(frozen=True)
class ItemsRepair:
    """Responses items through the core: the items to use (the input list itself when nothing
    changed or the repair was held back), the report, and whether the repair was applied."""

    items: list[TResponseInputItem]
    report: Report
    applied: bool


def repair_items(
    items: Sequence[TResponseInputItem],
    profile: ProfileArg = "default",
    *,
    where: str = "openai_agents",
    on_report: OnReport | None = None,
    **options: Unpack[RepairOptions],
) -> ItemsRepair:
    """Responses input items repaired for ``profile``: chat messages in between, the core on
    those, and Responses items back (reasoning items whole). The caller's items are left as
    they are; a history that needed nothing comes back as the same list."""
    original = items if isinstance(items, list) else list(items)
    reading = new_report()
    # (the items' ids and statuses ride along to to_responses; the chat never leaves here)
    chat = from_responses([_as_dict(item) for item in original], report=reading, keep_source_fields=True)
    held_back = lost_in_reading(reading)
    if held_back:
        _LOG.warning(
            "%s: history not repaired: it holds items a chat message cannot carry (%s); used as it is",
            where, ", ".join(held_back),
        )
        return ItemsRepair(items=original, report=reading, applied=False)
    result = repair_chat(chat, profile, options, mapped_back=True)
    log_report(_LOG, where, result.report, profile, on_report)
    if not result.report.changed:
        return ItemsRepair(items=original, report=result.report, applied=True)
    repaired: list[TResponseInputItem] = to_responses(result.messages)
    return ItemsRepair(items=repaired, report=result.report, applied=True)


class RepairingSession:
    """A ``Session`` that hands the run a repaired history (wraps any Agents SDK session).

    Args:
        session: the session that stores the items (``SQLiteSession``, a Redis or SQLAlchemy
            session, your own).
        profile: the profile the history is repaired for (the Agents SDK sends it to the
            model of the run; ``openai`` for OpenAI models).
        rewrite: also store the repaired history (``clear_session`` then ``add_items`` on the
            wrapped session) when a whole history was read and changed. Off by default: the
            stored history is the user's record and is never rewritten unless asked.
        on_report: called with the whole :class:`~normalizer.Report` of every repair.
        **options: the core's options (:class:`normalizer.RepairOptions`).
    """

    def __init__(
        self,
        session: Session,
        profile: ProfileArg = "default",
        *,
        rewrite: bool = False,
        on_report: OnReport | None = None,
        **options: Unpack[RepairOptions],
    ) -> None:
        self.session = session
        self.profile = profile
        self.rewrite = rewrite
        self.on_report = on_report
        self.options = options

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def session_settings(self) -> SessionSettings | None:
        return self.session.session_settings

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The wrapped session's items, repaired (a ``limit`` is the wrapped session's: a
        window that starts with a result whose call is outside it loses that result)."""
        items = await self.session.get_items(limit)
        outcome = repair_items(
            items, self.profile, where=f"session {self.session_id}", on_report=self.on_report, **self.options
        )
        if self.rewrite and outcome.items is not items and self._whole_history(limit):
            await self.session.clear_session()
            await self.session.add_items(outcome.items)
            _LOG.info("session %s: stored the repaired history (%d items)", self.session_id, len(outcome.items))
        return outcome.items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await self.session.add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        return await self.session.pop_item()

    async def clear_session(self) -> None:
        await self.session.clear_session()

    def __getattr__(self, name: str) -> Any:
        """Anything else is the wrapped session's (``run_compaction`` of a compaction-aware
        session, ``db_path``...): the wrapper only changes what ``get_items`` returns."""
        if name == "session":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.session, name)

    def _whole_history(self, limit: int | None) -> bool:
        """Only a history read whole may replace the stored one (a window would drop the rest)."""
        settings = self.session.session_settings
        return limit is None and (settings is None or settings.limit is None)


class ModelInputRepair:
    """A ``RunConfig(call_model_input_filter=...)`` that repairs each model call's input.

    Args:
        profile: a profile, or ``"auto"`` (the default): the profile of the agent's model name
            (:func:`normalizer.profile_for_model`; ``default`` for a model with no name).
        on_report: called with the whole :class:`~normalizer.Report` of every repair.
        **options: the core's options (:class:`normalizer.RepairOptions`).
    """

    def __init__(self, profile: AutoProfile = AUTO, *, on_report: OnReport | None = None, **options: Unpack[RepairOptions]) -> None:
        self.profile = profile
        self.on_report = on_report
        self.options = options

    def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        """The model input with its items repaired; the instructions as they are."""
        profile = resolve_profile(self.profile, _model_name(data.agent.model))
        outcome = repair_items(
            data.model_data.input, profile, where=f"agent {data.agent.name}", on_report=self.on_report, **self.options
        )
        if outcome.items is data.model_data.input:
            return data.model_data
        return ModelInputData(input=outcome.items, instructions=data.model_data.instructions)


#: :class:`ModelInputRepair` with its defaults (the agent's model picks the profile).
repair_model_input = ModelInputRepair()


def _model_name(model: object) -> str | None:
    """An agent's model as a name: a string, or a Model object's ``model`` (the SDK's OpenAI
    models keep the name there); None when there is none to read."""
    if isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None


def _as_dict(item: Any) -> Any:
    """A session item as a plain dict: stored items are dicts, items fresh from a model
    response can be the OpenAI SDK's pydantic models."""
    dump = getattr(item, "model_dump", None)
    if dump is not None and not isinstance(item, dict):
        return dump(exclude_unset=True, mode="json")
    return item
