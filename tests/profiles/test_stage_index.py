import normalizer, pytest
from normalizer import LimitExceeded
from normalizer.profiles import _stage as _stage
def test_stage_limit_names_the_index_through_normalize_sync(monkeypatch):
    monkeypatch.setattr(_stage, "MAX_LEADING_SYSTEMS", 3)
    msgs = [{"role": "system", "content": f"s{i}"} for i in range(6)]
    with pytest.raises(LimitExceeded) as exc:
        list(normalizer.repair(msgs, profile="jinja-strict"))
    assert exc.value.index == 3
