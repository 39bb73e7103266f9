"""The state table, compiled: one plain function per (state, event), generated at import.

``_state.py`` declares the table for ``transitions`` (the spec, the README's diagram, the
reference the tests drive). A ``transitions`` trigger costs ~8 us -- a hundred Python calls
and a dozen logger calls -- while the whole per-message budget is ~2 us, so the per-message
path does not run it. Instead :func:`compile_table` reads the *same* machine's own
``Event``/``Transition`` objects and writes, for every (state, event), a function that does
exactly what a trigger does: try the rows in order, and for the first whose conditions all
hold, set the destination state and run its callbacks. For ``idle``/``user``::

    def idle__user(self, message):
        self.state = 'user'
        hold_user(self, message)

A pair with no unconditional row ends in ``raise AssertionError('table is not total ...')``:
a gap in the table is a loud bug, never a silently dropped message (Rule 2 of ``_state.py``
says the table is total, and tests/test_state.py checks both that and that these functions
behave exactly like ``transitions`` over random event sequences).

Nothing is declared here: the rows, their order, conditions (``unless`` as negations) and
callbacks (``before``, then ``after``, as transitions runs them) all come from the
machine; the callables are looked up on the model class by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from transitions import Machine

from . import _state

__all__ = ["Dispatch", "compile_table", "reference_machine"]

#: One compiled (state, event): called as ``dispatch(model, message)``.
Dispatch = Callable[[Any, Any], None]


def reference_machine(model: Any = None) -> Machine:
    """The transitions machine that declares the table (model=None: declaration only)."""
    return Machine(
        model=model,
        states=_state.STATES,
        transitions=_state.TRANSITIONS,
        initial=_state.IDLE,
        auto_transitions=False,
        model_override=model is not None,
    )


def compile_table(machine: Machine, cls: type) -> dict[str, dict[str, Dispatch]]:
    """``{state: {event: function}}`` generated from ``machine``'s transitions, with the
    conditions and actions taken from ``cls`` (see the module docstring)."""
    # What this compiler does not write: refuse a table that uses it, rather than run it wrong.
    if machine.before_state_change or machine.after_state_change or machine.prepare_event or machine.finalize_event:
        raise NotImplementedError("machine-level callbacks are not compiled")
    for state in machine.states.values():
        if state.on_enter or state.on_exit:
            raise NotImplementedError(f"on_enter/on_exit callbacks of {state.name!r} are not compiled")
    table: dict[str, dict[str, Dispatch]] = {state: {} for state in machine.states}
    for event_name, event in machine.events.items():
        for source, transitions in event.transitions.items():
            table[source][event_name] = _compile(cls, source, event_name, transitions)
    return table


def _compile(cls: type, source: str, event: str, transitions: list[Any]) -> Dispatch:
    namespace: dict[str, Any] = {}
    names: dict[int, str] = {}

    def ref(func: Any) -> str:
        # A name in the generated function's globals for each callable (a module-level
        # lookup, cheaper than an attribute lookup and a bound method per call).
        if isinstance(func, str):
            func = getattr(cls, func)
        key = id(func)
        if key not in names:
            names[key] = f"_f{len(names)}"
            namespace[names[key]] = func
        return names[key]

    name = f"{source}__{event}"
    lines = [f"def {name}(self, message):"]
    total = False
    for transition in transitions:
        if transition.prepare:  # transitions runs these before the conditions
            raise NotImplementedError(f"prepare callbacks are not compiled ({source}/{event})")
        tests = [
            f"{'' if condition.target else 'not '}{ref(condition.func)}(self, message)"
            for condition in transition.conditions
        ]
        body = []
        if transition.dest is not None:
            body.append(f"self.state = {transition.dest!r}")
        for callback in (*transition.before, *transition.after):
            body.append(f"{ref(callback)}(self, message)")
        body.append("return")
        if tests:
            lines.append(f"    if {' and '.join(tests)}:")
            lines.extend(f"        {line}" for line in body)
        else:
            lines.extend(f"    {line}" for line in body)
            total = True
            break  # rows after an unconditional one can never be reached (transitions' semantics too)
    if not total:
        lines.append(f"    raise AssertionError('table is not total: {source}/{event}')")
    source_code = "\n".join(lines)
    exec(compile(source_code, f"<dispatch {source}/{event}>", "exec"), namespace)  # noqa: S102 - our own table
    function: Dispatch = namespace[name]
    function.__doc__ = source_code  # what runs, for whoever reads it in a debugger
    return function
