"""The state table: total, and the compiled dispatch (the function ``Normalizer.feed`` calls,
written to ``_table.py``) is current and behaves exactly like transitions."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from transitions import Machine

from normalizer import _state, _table
from normalizer._core import Normalizer
from normalizer._dispatch import compile_dispatch, reference_machine, render
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
    # One branch per live (state, event), generated from the declared rows in order.
    assert _table.__all__ == ["dispatch"]
    source = render(reference_machine())
    assert "\n    elif state == 'idle':\n" in source
    assert "\n        elif event == 'user':\n            self.state = 'user'\n" \
           "            self.hold_user(message)\n" in source.split("elif state == 'idle':")[1]
    assert "\n    if state == 'turn':\n        if event == 'tool':\n" \
           "            if self.completes_turn(message):\n                self.state = 'idle'\n" \
           "                self.take_result(message)\n                self.end_turn(message)\n" \
           "                return\n" in source
    for state in LIVE:
        assert f"state == {state!r}:" in source
    assert source.count("event == ") == len(LIVE) * len(EVENTS)


def test_the_table_module_is_what_the_machine_renders():
    # _table.py is generated: a row changed in _state.py without regenerating it fails here.
    path = Path(_table.__file__).with_name("_table.py")
    if not path.exists():
        pytest.skip(f"no source next to {_table.__file__}")
    assert path.read_text(encoding="utf-8") == render(reference_machine()), (
        "normalizer/_table.py is out of date: run `python -m normalizer._dispatch`"
    )


def test_the_per_message_path_does_not_import_transitions():
    # The table is declared for transitions and checked against it; running it does not
    # need it (nor its logging): a child process, as a fresh start-up.
    code = (
        "import sys, normalizer\n"
        "list(normalizer.repair([{'role': 'user', 'content': 'x'}, {'role': 'assistant', 'content': 'y'}]))\n"
        "print(sorted(m for m in ('transitions', 'normalizer._dispatch') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_gap_in_the_table_is_loud():
    machine = Machine(model=None, states=["a", "b"], initial="a", auto_transitions=False,
                      transitions=[{"trigger": "go", "source": "a", "dest": "b", "conditions": ["ok"]}])

    class Model:
        state = "a"

        def ok(self, message):
            return False

    model = Model()
    with pytest.raises(AssertionError, match="table is not total: a/go"):
        compile_dispatch(machine, Model)(model, "go", None)
    assert model.state == "a"


def test_dispatch_refuses_what_the_table_has_no_row_for():
    # A KeyError (Normalizer.feed never gets here: it refuses
    # a closed normalizer, and every role is an event).
    recorder = Recorder({})
    recorder.state = CLOSED
    with pytest.raises(KeyError):
        DISPATCH(recorder, "user", {"role": "user"})
    recorder.state = _state.IDLE
    with pytest.raises(KeyError):
        DISPATCH(recorder, "function", {"role": "function"})
    assert recorder.log == [] and recorder.state == _state.IDLE


def test_a_table_without_rows_dispatches_nothing():
    machine = Machine(model=None, states=["a"], initial="a", auto_transitions=False, transitions=[])
    model = Recorder({})
    model.state = "a"
    with pytest.raises(KeyError):
        compile_dispatch(machine, Recorder)(model, "go", None)


def test_dispatch_tests_the_commonest_first():
    source = render(reference_machine())
    # turn/tool is a quarter of the benchmark workloads' messages: tested first.
    assert source.index("    if state == 'turn':\n        if event == 'tool':\n") < source.index("state == 'idle'")


def test_callbacks_the_compiler_does_not_write_are_refused():
    machine = Machine(model=None, states=["a", "b"], initial="a", auto_transitions=False,
                      transitions=[{"trigger": "go", "source": "a", "dest": "b", "prepare": ["p"]}])
    with pytest.raises(NotImplementedError, match="prepare"):
        compile_dispatch(machine, object)
    entering = Machine(model=None, states=[{"name": "a"}, {"name": "b", "on_enter": ["hi"]}], initial="a",
                       auto_transitions=False, transitions=[{"trigger": "go", "source": "a", "dest": "b"}])
    with pytest.raises(NotImplementedError, match="on_enter"):
        render(entering)


def test_a_name_the_model_does_not_have_is_refused():
    machine = Machine(model=None, states=["a", "b"], initial="a", auto_transitions=False,
                      transitions=[{"trigger": "go", "source": "a", "dest": "b", "after": ["missing"]}])
    with pytest.raises(NotImplementedError, match="has no method 'missing'"):
        compile_dispatch(machine, object)


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

DISPATCH = compile_dispatch(
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
        DISPATCH(compiled, event, {"role": event})  # as Normalizer.feed dispatches
        assert compiled.state == reference.state, f"step {step}: {event}"
        assert compiled.log == reference.log, f"step {step}: {event}"


def test_diagram_is_mermaid_from_the_table():
    text = _state.diagram()
    assert "stateDiagram-v2" in text
    for state in STATES:
        assert f'state "{state}"' in text
