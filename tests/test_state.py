"""The state table: total, and the compiled dispatch (the functions ``Normalizer.feed`` calls)
behaves exactly like transitions."""

from __future__ import annotations

import random

import pytest
from transitions import Machine

from normalizer import _state
from normalizer._core import Normalizer
from normalizer._dispatch import compile_table
from normalizer._state import CLOSED, EVENTS, LIVE, STATES, TRANSITIONS

CONDITIONS = sorted({c for row in TRANSITIONS for c in row.get("conditions", [])})
ACTIONS = sorted({a for row in TRANSITIONS for a in row["after"]})


def test_table_is_total():
    for state in LIVE:
        for event in EVENTS:
            rows = [r for r in TRANSITIONS if r["trigger"] == event and r["source"] == state]
            assert rows, f"no row for {event} in {state}"
            assert "conditions" not in rows[-1], f"{state}/{event} has no unconditional fallback row"


def test_closed_accepts_nothing():
    assert not [r for r in TRANSITIONS if r["source"] == CLOSED]


def test_every_state_is_reachable_and_every_name_is_implemented():
    dests = {r["dest"] for r in TRANSITIONS} | {_state.IDLE}
    assert set(STATES) <= dests
    for name in CONDITIONS + ACTIONS:
        assert callable(getattr(Normalizer, name)), name


def test_compiled_table_comes_from_the_machine():
    # One function per live (state, event), generated from the declared rows in order.
    table = Normalizer._table
    assert sorted(table) == sorted(STATES) and table[CLOSED] == {}
    for state in LIVE:
        assert sorted(table[state]) == sorted(EVENTS)
    assert Normalizer._table["idle"]["user"].__doc__ == (
        "def idle__user(self, message):\n    self.state = 'user'\n    _f0(self, message)\n    return"
    )
    turn_tool = Normalizer._table["turn"]["tool"].__doc__
    assert turn_tool.splitlines()[1:4] == [
        "    if _f0(self, message):", "        self.state = 'idle'", "        _f1(self, message)"]


def test_a_gap_in_the_table_is_loud():
    machine = Machine(model=None, states=["a", "b"], initial="a", auto_transitions=False,
                      transitions=[{"trigger": "go", "source": "a", "dest": "b", "conditions": ["ok"]}])

    class Model:
        state = "a"

        def ok(self, message):
            return False

    model = Model()
    with pytest.raises(AssertionError, match="table is not total: a/go"):
        compile_table(machine, Model)["a"]["go"](model, None)
    assert model.state == "a"


def test_callbacks_the_compiler_does_not_write_are_refused():
    machine = Machine(model=None, states=["a", "b"], initial="a", auto_transitions=False,
                      transitions=[{"trigger": "go", "source": "a", "dest": "b", "prepare": ["p"]}])
    with pytest.raises(NotImplementedError, match="prepare"):
        compile_table(machine, object)


class Recorder:
    """A model whose conditions answer from an oracle and whose actions only log."""

    state: str

    def __init__(self, oracle: dict[tuple[int, str], bool]) -> None:
        self.state = _state.IDLE
        self.oracle = oracle
        self.step = 0
        self.log: list[str] = []


def _condition(name: str):
    def condition(self: Recorder, message: object = None) -> bool:
        return self.oracle[(self.step, name)]

    condition.__name__ = name
    return condition


def _action(name: str):
    def action(self: Recorder, message: object = None) -> None:
        self.log.append(name)

    action.__name__ = name
    return action


for _name in CONDITIONS:
    setattr(Recorder, _name, _condition(_name))
for _name in ACTIONS:
    setattr(Recorder, _name, _action(_name))

COMPILED = compile_table(
    Machine(model=None, states=STATES, transitions=TRANSITIONS, initial=_state.IDLE, auto_transitions=False),
    Recorder,
)


@pytest.mark.parametrize("seed", range(40))
def test_compiled_dispatch_equals_transitions_trigger(seed: int):
    rng = random.Random(seed)
    steps = 60
    oracle = {(i, c): rng.random() < 0.5 for i in range(steps) for c in CONDITIONS}
    reference = Recorder(oracle)
    Machine(
        model=reference, states=STATES, transitions=TRANSITIONS, initial=_state.IDLE,
        auto_transitions=False,
    )
    compiled = Recorder(oracle)
    for step in range(steps):
        if reference.state == CLOSED:
            break
        event = rng.choice(EVENTS if step > 5 else EVENTS[:-1])
        reference.step = compiled.step = step
        reference.trigger(event, {"role": event})
        COMPILED[compiled.state][event](compiled, {"role": event})  # as Normalizer.feed dispatches
        assert compiled.state == reference.state, f"step {step}: {event}"
        assert compiled.log == reference.log, f"step {step}: {event}"


def test_diagram_is_mermaid_from_the_table():
    text = _state.diagram()
    assert "stateDiagram-v2" in text
    for state in STATES:
        assert f'state "{state}"' in text
