"""Adapters that repair a history where a framework or a gateway replays it.

Each module is a thin layer around the core (:func:`normalizer.repair`) for one framework,
installed with its extra, and imported only by name (``import normalizer`` imports none of
them, and this package imports nothing):

=======================================  =====================================================
``normalizer.integrations.litellm``      LiteLLM SDK (``litellm.callbacks``) and Proxy
                                         (``callbacks:``): :class:`NormalizerCallback`,
                                         :func:`repair_request`. Extra ``[litellm]``.
``normalizer.integrations.openai_agents``  OpenAI Agents SDK: :class:`RepairingSession`,
                                         :func:`repair_model_input`. Extra ``[agents]``.
``normalizer.integrations.langchain``    LangChain v1 agents: :class:`NormalizerMiddleware`,
                                         :func:`repair_messages`. Extra ``[langchain]``.
``normalizer.integrations.pydantic_ai``  pydantic-ai: :func:`repair_history` (a history
                                         processor), :class:`HistoryRepair`,
                                         :func:`repair_capability` (pydantic-ai 2's
                                         ``ProcessHistory``). Extra ``[pydantic-ai]``.
=======================================  =====================================================

Every adapter leaves the caller's objects as they are (a repaired history is a new list;
stored sessions are never rewritten unless asked), keeps what the repair changed out of
stdout (the logger ``normalizer.integrations``, the framework's own metadata where it has
some, and an ``on_report`` callback with the full :class:`~normalizer.Report`), and raises
the core's own errors (:class:`~normalizer.InputError`...) for a history it cannot repair.
"""

__all__: list[str] = []
