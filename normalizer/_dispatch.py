"""The state table, compiled: one function, ``dispatch``, that does what any trigger does,
written out as Python.

``_state.py`` declares the table for ``transitions`` (the spec, the README's diagram, the
reference the tests drive). A ``transitions`` trigger costs ~8 us -- a hundred Python calls
and a dozen logger calls -- while the whole per-message budget is ~2 us, so the per-message
path does not run it. Instead :func:`render` reads the *same* machine's own
``Event``/``Transition`` objects and writes ``dispatch(self, event, message)``: for every
(state, event), a branch that does exactly what the trigger does -- try the rows in order,
and for the first whose conditions all hold, set the destination state and run its
callbacks. For ``idle``/``user``::

    elif state == 'idle':
        if event == 'assistant':
            ...
        elif event == 'user':
            self.state = 'user'
            self.hold_user(message)

The branches are tested commonest first (``_HOT_STATES``, an order only: they exclude each
other). One function rather than one per (state, event) looked up in a dict: compiled,
every action is then a native call, where a function taken out of a dict is called as a
Python object (3-4% of the compiled core's instructions a message); interpreted, the string
comparisons cost about what the two dict lookups did (under 1% more).

A pair with no unconditional row ends in ``raise AssertionError('table is not total ...')``:
a gap in the table is a loud bug, never a silently dropped message (Rule 2 of ``_state.py``
says the table is total). A state with no rows (``closed``) or an event the table does not
know raises ``KeyError``.

The function is written to ``_table.py``, which ``Normalizer`` imports: a module like any
other, so the optional compiled build (mypyc) compiles the dispatch too, each condition and
action a native call, and ``import normalizer`` neither imports ``transitions`` nor runs
``exec``. ``python -m normalizer._dispatch`` rewrites it; ``tests/test_state.py`` fails when
it differs from what the table renders, and drives the rendered function
(``compile_dispatch``) against ``transitions`` itself over random event sequences.

Nothing of the table is declared here: the rows, their order, conditions (``unless`` as
negations) and callbacks (``before``, then ``after``, as transitions runs them) all come
from the machine. Only the order ``dispatch`` compares in is (``_HOT_STATES``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transitions import Machine

from . import _state

__all__ = ["Dispatch", "compile_dispatch", "reference_machine", "render", "TABLE_MODULE"]

#: The compiled table: called as ``dispatch(model, event, message)``.
Dispatch = Callable[[Any, str, Any], None]

#: Where the rendered table lives (imported by ``_core``).
TABLE_MODULE = Path(__file__).with_name("_table.py")

_HEADER = '''\
# GENERATED from the table in _state.py by `python -m normalizer._dispatch`: do not edit.
# tests/test_state.py fails when this file and the table differ. How and why: _dispatch.py.
"""The state table, compiled: ``dispatch(normalizer, event, message)`` does what the
``transitions`` trigger ``event`` does in the normalizer's state (see ``_dispatch.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._core import Normalizer

__all__ = ["dispatch"]
'''


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


def render(machine: Machine) -> str:
    """The source of ``_table.py`` for ``machine`` (see the module docstring)."""
    # What this compiler does not write: refuse a table that uses it, rather than run it wrong.
    if machine.before_state_change or machine.after_state_change or machine.prepare_event or machine.finalize_event:
        raise NotImplementedError("machine-level callbacks are not compiled")
    for state in machine.states.values():
        if state.on_enter or state.on_exit:
            raise NotImplementedError(f"on_enter/on_exit callbacks of {state.name!r} are not compiled")
    bodies: dict[str, dict[str, list[str]]] = {state: {} for state in machine.states}
    for event_name, event in machine.events.items():
        for source, transitions in event.transitions.items():
            bodies[source][event_name] = _body(source, event_name, transitions)
    return _HEADER + "\n\n" + _dispatcher(bodies)


def _dispatcher(bodies: dict[str, dict[str, list[str]]]) -> str:
    # Every (state, event) body in one function, chosen by comparing strings (why: the
    # module docstring).
    lines = [
        "def dispatch(self: Normalizer, event: str, message: Any) -> None:",
        '    """What the trigger ``event`` does in the current state (the per-message path:',
        '    ``Normalizer.feed``)."""',
        "    state = self.state",
    ]
    first_state = True
    for state in sorted(bodies, key=_hot_first(_HOT_STATES)):
        events = bodies[state]
        if not events:
            continue
        lines.append(f"    {'if' if first_state else 'elif'} state == {state!r}:")
        first_state = False
        for position, event in enumerate(sorted(events, key=_hot_first(_HOT_EVENTS.get(state, [])))):
            body = events[event]
            lines.append(f"        {'if' if position == 0 else 'elif'} event == {event!r}:")
            lines.extend(f"            {line}" for line in body)
        lines.append("        else:")
        lines.append("            raise KeyError(event)")
    if first_state:  # a table with no rows at all
        lines.append("    raise KeyError(state)")
    else:
        lines.append("    else:")
        lines.append("        raise KeyError(state)  # closed: Normalizer.feed refuses first")
    return "\n".join(lines) + "\n"


# The order dispatch() tests states and events in: the commonest first (an order only: the
# branches exclude each other). Counted over the benchmark's three workloads, where
# turn/tool, idle/assistant, user/assistant and turn/user are 80-90% of the messages
# (benchmarks/workload.py); states and events not named here follow in the table's order.
_HOT_STATES = [_state.TURN, _state.IDLE, _state.USER, _state.TOOLS]
_HOT_EVENTS = {
    _state.TURN: ["tool", "user", "assistant"],
    _state.IDLE: ["assistant", "user"],
    _state.USER: ["assistant", "user"],
    _state.TOOLS: ["tool", "assistant"],
}


def _hot_first(order: list[str]) -> Callable[[str], int]:
    return lambda name: order.index(name) if name in order else len(order)


def _body(source: str, event: str, transitions: list[Any]) -> list[str]:
    # What a trigger does: the rows in order, the first whose conditions all hold.
    lines: list[str] = []
    total = False
    for transition in transitions:
        if transition.prepare:  # transitions runs these before the conditions
            raise NotImplementedError(f"prepare callbacks are not compiled ({source}/{event})")
        tests = [
            f"{'' if condition.target else 'not '}self.{_name(condition.func)}(message)"
            for condition in transition.conditions
        ]
        body = []
        if transition.dest is not None:
            body.append(f"self.state = {transition.dest!r}")
        for callback in (*transition.before, *transition.after):
            body.append(f"self.{_name(callback)}(message)")
        if tests:
            lines.append(f"if {' and '.join(tests)}:")
            lines.extend(f"    {line}" for line in [*body, "return"])
        else:
            lines.extend(body)
            total = True
            break  # rows after an unconditional one can never be reached (transitions' semantics too)
    if not total:
        lines.append(f"raise AssertionError('table is not total: {source}/{event}')")
    return lines


def _name(func: Any) -> str:
    # Conditions and callbacks are named methods of the model: the table is data.
    if not isinstance(func, str) or not func.isidentifier():
        raise NotImplementedError(f"only methods named by a string are compiled, not {func!r}")
    return func


def compile_dispatch(machine: Machine, cls: type) -> Dispatch:
    """The rendered ``dispatch(model, event, message)`` run as code, for a model of class
    ``cls`` (which must have every condition and action the table names)."""
    source = render(machine)
    namespace: dict[str, Any] = {"__name__": f"<table of {cls.__name__}>"}
    exec(compile(source, namespace["__name__"], "exec"), namespace)  # noqa: S102 - our own table
    for event in machine.events.values():
        for transitions in event.transitions.values():
            for transition in transitions:
                for func in (*(c.func for c in transition.conditions), *transition.before, *transition.after):
                    if not callable(getattr(cls, _name(func), None)):
                        raise NotImplementedError(f"{cls.__name__} has no method {func!r} the table names")
    dispatch: Dispatch = namespace["dispatch"]
    return dispatch


if __name__ == "__main__":  # python -m normalizer._dispatch [--check]
    text = render(reference_machine())
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if TABLE_MODULE.read_text(encoding="utf-8") == text else f"{TABLE_MODULE} is out of date")
    TABLE_MODULE.write_text(text, encoding="utf-8")
