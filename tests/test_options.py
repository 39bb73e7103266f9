"""normalizer._options: the core's options, and make_options' plain fast path (no pydantic
schema for options whose values already have their fields' exact types)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalizer._errors import UsageError
from normalizer._options import _PLAIN_CHECKS, Options, make_options


def test_every_field_has_a_plain_check() -> None:
    # A field without one would send every Normalizer() through pydantic's schema.
    assert set(_PLAIN_CHECKS) == set(Options.model_fields)


def test_the_fast_path_fills_the_defaults_as_pydantic_would() -> None:
    # make_options gives model_construct every field (pydantic's default machinery asks each
    # default for its factory's signature: half the cost of a Normalizer). That shares each
    # default between instances, which is right only while no default is mutable.
    for name, info in Options.model_fields.items():
        assert info.default_factory is None, name
        assert info.default is None or type(info.default) in (bool, int, str), name
    made, validated = make_options({}, {}), Options()
    assert made == validated and made.model_fields_set == validated.model_fields_set == set()
    assert list(made.__dict__.items()) == list(validated.__dict__.items())
    some = make_options({"trailing_calls": "keep"}, {"max_records": 0})
    assert some.model_fields_set == Options(trailing_calls="keep", max_records=0).model_fields_set


def test_plain_options_made_before_are_given_again_but_a_callback_is_never_kept() -> None:
    import gc
    import weakref

    from normalizer import _options

    first = make_options({"trailing_calls": "keep"}, {"max_records": 0})
    assert make_options({}, {"max_records": 0, "trailing_calls": "keep"}) is first  # frozen: safe to share
    assert make_options({}, {"max_records": 1, "trailing_calls": "keep"}) is not first

    def listener(record: Any) -> None:
        pass

    ref = weakref.ref(listener)
    one, two = make_options({}, {"on_record": listener}), make_options({}, {"on_record": listener})
    assert one is not two and one == two
    del one, two, listener
    gc.collect()
    assert ref() is None  # no cache holds the callback (the CLI's holds its spool file)
    # bounded: past _MAX_MADE distinct options the cache starts again
    for n in range(_options._MAX_MADE + 5):
        make_options({}, {"max_records": 10_000 + n})
    assert 0 < len(_options._MADE) <= _options._MAX_MADE
    # a value of another type is not plain: it never meets the cache (nor an equal key)
    assert make_options({}, {"validate": False}).validate_messages is False
    assert make_options({}, {"validate": 0}).validate_messages is False


def _listener(record: Any) -> None:
    pass


values = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.integers(2**62, 2**70), st.floats(allow_nan=False),
    st.text(max_size=6), st.sampled_from(["error", "skip", "drop", "keep_as_user", "stub", "keep", "Drop", "true", "1"]),
    st.binary(max_size=3), st.lists(st.integers(), max_size=2), st.just(_listener), st.just(print),
    st.builds(lambda n: type("N", (int,), {})(n), st.integers(0, 3)),  # an int subclass
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(Options.model_fields)), values)
def test_what_the_plain_check_accepts_pydantic_returns_unchanged(name: str, value: Any) -> None:
    if not _PLAIN_CHECKS[name](value):
        return  # not plain: pydantic decides (it may accept, coerce or refuse)
    validated = Options(**{name: value})
    assert getattr(validated, name) is value or (getattr(validated, name) == value
                                                 and type(getattr(validated, name)) is type(value))
    assert Options.model_construct(**{name: value}) == validated


def test_plain_options_skip_pydantic_and_others_still_meet_it() -> None:
    plain = make_options({}, {"max_records": 5, "orphan_results": "keep_as_user", "validate": False})
    assert (plain.max_records, plain.orphan_results, plain.validate_messages) == (5, "keep_as_user", False)
    assert plain == Options(max_records=5, orphan_results="keep_as_user", validate_messages=False)
    assert plain.model_fields_set == {"max_records", "orphan_results", "validate_messages"}
    with pytest.raises(Exception, match="frozen"):
        plain.max_records = 6
    # not plain: pydantic's lax mode coerces what it can, and refuses the rest
    assert make_options({}, {"max_records": "7"}).max_records == 7
    with pytest.raises(UsageError, match=r"option trailing_calls: .* \(got 'maybe'\)"):
        make_options({}, {"trailing_calls": "maybe"})
    with pytest.raises(UsageError, match="option validate: "):
        make_options({}, {"validate": "perhaps"})
    with pytest.raises(UsageError, match="option on_record: "):
        make_options({}, {"on_record": 5})


def test_a_plain_repair_builds_no_pydantic_schema() -> None:
    # Start-up: the library's own reports, options, rules and profiles need no schema; a
    # message that is not plain (list content) loads the message models, and only those.
    code = """if True:
        import sys
        from normalizer import repair
        from normalizer._options import Options
        from normalizer._report import Report
        from normalizer.profiles._profiles import Profile
        from normalizer.profiles._rules import Rule
        models = (Options, Report, Profile, Rule)
        call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        stream = repair([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": "call_1", "content": "ok"}], profile="mistral", max_records=3)
        print(len(list(stream)), sorted(stream.report.counts))
        print([m.__pydantic_complete__ for m in models], "pydantic.plugin._loader" in sys.modules)
        list(repair([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]))
        print([m.__pydantic_complete__ for m in models])
        print(stream.report.model_dump_json(exclude={"records"}))
        print(Report.__pydantic_complete__)
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "3 ['empty_content_to_null', 'rewrite_call_id', 'rewrite_result_id']"
    assert out[1] == "[False, False, False, False] False"
    assert out[2] == "[False, False, False, False]"
    assert out[3] == ('{"messages_in":3,"messages_out":3,"format":null,"counts":{"empty_content_to_null":1,'
                      '"rewrite_call_id":1,"rewrite_result_id":1},"records_omitted":0,"max_records":3}')
    assert out[4] == "True"  # dumped: built then
