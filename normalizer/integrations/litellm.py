"""LiteLLM: repair every request's history, in the SDK and in the Proxy.

One callback serves both (``pip install 'chat-normalizer[litellm]'``)::

    import litellm
    from normalizer.integrations.litellm import NormalizerCallback

    litellm.callbacks.append(NormalizerCallback())      # every litellm.acompletion from now on

and in a Proxy's ``config.yaml`` (a module of yours holding ``normalizer_callback =
NormalizerCallback()``)::

    litellm_settings:
      callbacks: my_hooks.normalizer_callback

Where it runs (LiteLLM 1.110, read in its source and checked by the tests):

* ``async_pre_call_deployment_hook``: inside every async LiteLLM call (``acompletion``,
  ``anthropic_messages``...), after the Router picked the deployment: ``kwargs["model"]`` is
  the deployment's model (``anthropic/claude-sonnet-4-5``), so ``profile="auto"`` picks that
  model's profile. What it returns is what LiteLLM sends. Also in the Proxy, which calls the
  SDK for each request.
* ``async_pre_call_hook``: the Proxy's own hook, before routing (``data["model"]`` is the
  model name the client asked for). ``call_type`` ``acompletion``/``completion`` for
  ``/v1/chat/completions`` (OpenAI messages), ``anthropic_messages`` for ``/v1/messages``
  (Anthropic blocks and a top-level ``system``: repaired as Anthropic messages and written
  back as Anthropic messages).

Sync ``litellm.completion`` runs neither hook: call :func:`repair_request` on its keywords.
``messages`` passed positionally (``acompletion("gpt-4o", messages)``) are not in the kwargs a
hook sees; they are sent as they are, and the logger says so.

What was repaired goes into the request's LiteLLM metadata (``metadata`` or
``litellm_metadata``, as LiteLLM names it for the route) under ``"chat_normalizer"`` (profile,
counts, messages in and out), which every LiteLLM logging callback receives; to the logger
``normalizer.integrations.litellm``; and, whole, to ``on_report``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from litellm.integrations.custom_logger import CustomLogger
from typing_extensions import Unpack

from .._report import Report, new_report
from .._types import ProfileArg, ProfileName, RepairOptions
from ..formats._memory import from_anthropic, to_anthropic
from ._common import AUTO, LOGGER, AutoProfile, OnReport, is_auto, log_report, lost_in_reading, repair_chat, resolve_profile, summary

if TYPE_CHECKING:
    from litellm.caching.dual_cache import DualCache
    from litellm.types.proxy.auth.user_api_key_auth import UserAPIKeyAuth
    from litellm.types.utils import CallTypes, CallTypesLiteral

__all__ = ["NormalizerCallback", "repair_request", "profile_for_litellm_model", "METADATA_KEY", "PROVIDER_PROFILES"]

_LOG = LOGGER.getChild("litellm")

#: The key under the request's LiteLLM metadata that says what was repaired.
METADATA_KEY = "chat_normalizer"

#: LiteLLM providers whose API decides what a history must look like, whatever the model:
#: ``profile="auto"`` takes these by the model's provider prefix (``bedrock/...``), and every
#: other model by its name (:func:`normalizer.profile_for_model`; ``openai/``, ``hosted_vllm/``
#: and other OpenAI-compatible routes serve any model, whose name then decides).
PROVIDER_PROFILES: Mapping[str, ProfileName] = {
    "anthropic": "anthropic",
    "bedrock": "bedrock",
    "gemini": "gemini",
    "groq": "groq",
    "xai": "xai",
    "deepseek": "deepseek",
    "moonshot": "moonshot",
    "dashscope": "qwen",
    "zai": "zhipu",
}

#: Call types whose ``messages`` are Anthropic Messages (``/v1/messages``, ``litellm.anthropic_messages``).
ANTHROPIC_CALL_TYPES = frozenset({"anthropic_messages", "aanthropic_messages"})
#: Call types whose ``messages`` are OpenAI chat messages.
CHAT_CALL_TYPES = frozenset({"completion", "acompletion", "text_completion", "atext_completion"})


def profile_for_litellm_model(model: str | None, provider: str | None = None) -> ProfileArg:
    """The profile ``profile="auto"`` uses for a LiteLLM model name (``provider/model``).

    >>> profile_for_litellm_model("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0")
    'bedrock'
    >>> profile_for_litellm_model("openai/gpt-4o").name
    'openai'
    """
    if model and provider is None and "/" in model:
        provider = model.split("/", 1)[0]
    if provider is not None and provider in PROVIDER_PROFILES:
        return PROVIDER_PROFILES[provider]
    return resolve_profile(AUTO, model)


def repair_request(
    request: Mapping[str, Any],
    *,
    profile: AutoProfile = AUTO,
    call_type: str | None = None,
    on_report: OnReport | None = None,
    **options: Unpack[RepairOptions],
) -> dict[str, Any]:
    """A LiteLLM request's keywords with the history repaired: a new dict (``request`` and
    its messages are left as they are), for ``litellm.completion``, which runs no hook::

        response = litellm.completion(**repair_request({"model": model, "messages": history}))

    Chat messages are repaired for the model's profile (``profile="auto"``: see
    :func:`profile_for_litellm_model`); with ``call_type="anthropic_messages"`` the messages
    (and ``system``) are Anthropic Messages, repaired with the ``anthropic`` profile (``bedrock``
    for a Bedrock model) and written back as Anthropic Messages. A request without a list of
    ``messages`` comes back as a copy. What was repaired is in the copy's metadata, under
    :data:`METADATA_KEY`.
    """
    out = _repair(request, profile, call_type, options, on_report, where="repair_request")
    return dict(request) if out is None else out


class NormalizerCallback(CustomLogger):
    """A LiteLLM callback that repairs the history of every request (SDK and Proxy).

    Args:
        profile: a profile, or ``"auto"`` (the default): the profile of the request's model
            (:func:`profile_for_litellm_model`).
        on_report: called with the whole :class:`~normalizer.Report` of every repair.
        **options: the core's options (:class:`normalizer.RepairOptions`).
    """

    def __init__(self, profile: AutoProfile = AUTO, *, on_report: OnReport | None = None, **options: Unpack[RepairOptions]) -> None:
        super().__init__()
        self.profile = profile
        self.on_report = on_report
        self.options = options

    async def async_pre_call_deployment_hook(
        self, kwargs: dict[str, object], call_type: CallTypes | None
    ) -> dict[str, Any] | None:
        """The SDK's hook (and the Proxy's, per deployment): the new kwargs, or None to leave them."""
        name = call_type.value if call_type is not None else None
        return _repair(kwargs, self.profile, name, self.options, self.on_report, where=f"litellm {name}")

    async def async_pre_call_hook(
        self,
        user_api_key_dict: UserAPIKeyAuth,
        cache: DualCache,
        data: dict[str, Any],
        call_type: CallTypesLiteral,
    ) -> Exception | str | dict[str, Any] | None:
        """The Proxy's hook: the new request data, or None to leave it."""
        return _repair(data, self.profile, call_type, self.options, self.on_report, where=f"litellm proxy {call_type}")


def _repair(
    request: Mapping[str, Any],
    profile: AutoProfile,
    call_type: str | None,
    options: RepairOptions,
    on_report: OnReport | None,
    *,
    where: str,
) -> dict[str, Any] | None:
    """The request with its history repaired and the summary in its metadata, or None when
    it has no list of messages (a hook's "leave it as it is")."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        if call_type in CHAT_CALL_TYPES and messages is None and "prompt" not in request:
            _LOG.warning(
                "%s: no 'messages' keyword to repair (messages passed positionally are not "
                "visible to LiteLLM's hooks: pass messages=... by keyword)", where,
            )
        return None
    chosen = _profile_for_request(request, profile, call_type)
    if call_type in ANTHROPIC_CALL_TYPES:
        outcome = _repair_anthropic(request, messages, chosen, options, where=where)
    else:
        outcome = _repair_openai(messages, chosen, options)
    out = {**request, **outcome.history}
    for key, value in outcome.history.items():
        if value is None:
            del out[key]
    key = "litellm_metadata" if "litellm_metadata" in request else "metadata"
    metadata = request.get(key)
    said = summary(outcome.report, chosen)
    if not outcome.applied:
        said["applied"] = False
    out[key] = {**(metadata if isinstance(metadata, Mapping) else {}), METADATA_KEY: said}
    if outcome.applied:
        log_report(_LOG, where, outcome.report, chosen, on_report)
    elif on_report is not None:
        on_report(outcome.report)
    return out


@dataclass(frozen=True)
class _Outcome:
    """What one request's repair gives: the history keys to send (none: send it as it is; a
    key set to None is taken out of the request), the report, and whether the repair was applied (False: held back, and why was logged)."""

    history: dict[str, Any]
    report: Report
    applied: bool = True


def _profile_for_request(request: Mapping[str, Any], profile: AutoProfile, call_type: str | None) -> ProfileArg:
    """``profile``, or for ``"auto"`` the routed model's; Anthropic Messages are repaired for
    the API they go to as they are (``anthropic``, or ``bedrock`` for a Bedrock model)."""
    if not is_auto(profile):
        return profile
    model = request.get("model")
    provider = request.get("custom_llm_provider")
    chosen = profile_for_litellm_model(
        model if isinstance(model, str) else None, provider if isinstance(provider, str) else None
    )
    if call_type in ANTHROPIC_CALL_TYPES and chosen != "bedrock":
        return "anthropic"
    return chosen


def _repair_openai(messages: list[Any], profile: ProfileArg, options: RepairOptions) -> _Outcome:
    result = repair_chat(messages, profile, options)
    return _Outcome(history={"messages": result.messages} if result.report.changed else {}, report=result.report)


def _repair_anthropic(
    request: Mapping[str, Any], messages: list[Any], profile: ProfileArg, options: RepairOptions, *, where: str
) -> _Outcome:
    """Anthropic blocks to chat, the core, and back to Anthropic blocks (``system`` too)."""
    reading = new_report()
    chat = from_anthropic(messages, system=request.get("system"), report=reading, keep_source_fields=True)
    result = repair_chat(chat, profile, options, mapped_back=True)
    report = _joined(reading, result.report)
    held_back = lost_in_reading(reading)
    if held_back:
        # Blocks with no chat form (a server tool's blocks...) would not come back: send the
        # request as it is rather than lose them.
        _LOG.warning(
            "%s: history not repaired: it holds content a chat message cannot carry (%s); sent as it is",
            where, ", ".join(held_back),
        )
        return _Outcome(history={}, report=report, applied=False)
    if not report.changed:
        return _Outcome(history={}, report=report)
    # A history whose repair leaves no system message drops the request's ``system``.
    return _Outcome(history={"system": None, **to_anthropic(result.messages)}, report=report)


def _joined(reading: Report, core: Report) -> Report:
    """The core's report, with what reading the Anthropic blocks left out counted in it."""
    if not reading.counts:
        return core
    for record in reading.records:
        core.add(record.kind, record.detail, input=record.input, dropped=record.dropped)
    for kind, n in reading.counts.items():
        recorded = sum(1 for r in reading.records if r.kind == kind)
        if n > recorded:
            core.count(kind, n - recorded)
    return core
