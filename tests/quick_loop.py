"""What the quick loop leaves out (docs/contributing.md: ``python -m pytest -m "not slow"``),
declared once: ``conftest.py`` marks these tests ``slow``; ``tests/test_quick_loop.py`` holds
every entry to a test that exists. CI runs everything.
"""

from __future__ import annotations

#: Test path prefix (as pytest names it, from the repository root) -> why the quick loop
#: leaves it out. A prefix names a folder, a module or a test function (its parameters too).
SLOW: dict[str, str] = {
    # the judges and the real components: the [judges] extra, the owners' CLIs, the engines
    "tests/integrations/": "each framework against a stub server",
    "tests/distributed/": "a real Dask cluster and Ray",
    "tests/owners/": "the owners' own CLIs resume repaired sessions",
    "tests/profiles/test_validators.py": "the providers' own code judges every profile",
    "tests/test_packaging.py": "builds the sdist and the wheel, and installs them, compiled and pure, in a fresh venv",
    "tests/test_benchmarks.py": "runs every benchmark probe once",
    "tests/test_types.py::test_a_correct_caller_type_checks": "runs mypy on a caller",
    # processes started, signalled and raced
    "tests/cli/test_faults.py": "kills and signals chatnorm processes",
    "tests/cli/test_jobs.py": "starts worker processes",
    "tests/cli/test_in_place.py": "races a concurrent appender",
    "tests/cli/test_check_explain.py::test_check_with_a_profile_from_stdin": "two processes a profile",
    # long hostile and property runs
    "tests/formats/test_fuzz_readers.py": "mutates real records of every format",
    "tests/formats/test_hostile_records.py": "hostile records through every reader",
    "tests/formats/test_document_keys.py": "every document key through every format",
    "tests/formats/test_long_strings.py": "megabyte strings through every reader",
    "tests/formats/test_writers.py::test_finetune_lines_are_one_dumps_of_each_record": "a long property run",
    "tests/test_properties.py": "hypothesis histories under every profile",
    "tests/test_hostile.py": "hostile histories under every profile",
    "tests/test_aio.py::test_memory_does_not_grow_with_history_length": "streams a long history twice",
    "tests/test_messages.py::test_fast_path_accepts_only_what_the_adapter_returns_unchanged": "a long property run",
    "tests/profiles/test_check_hostile.py": "hostile histories through every checker",
    "tests/profiles/test_stage_records.py": "a long property run under every profile",
    "tests/profiles/test_stage.py::test_repair_satisfies_check_and_is_idempotent": "a property run a profile",
    "tests/profiles/test_stage.py::test_repair_with_opaque_turns_satisfies_check_and_is_idempotent": "a property run a profile",
    "tests/profiles/test_stage.py::test_repair_of_named_speakers_satisfies_check_and_is_idempotent": "a property run a profile",
    "tests/profiles/test_stage.py::test_no_part_that_is_not_text_is_lost_without_a_record": "a property run a profile",
    "tests/profiles/test_stage.py::test_repair_without_validation_does_not_mutate": "a property run a profile",
    # every sample through the command, several processes each
    "tests/cli/test_own_format.py::test_every_sample_in_place_keeps_its_format_and_then_stays_as_it_is": "every sample, in place, twice",
    "tests/cli/test_repair_check.py::test_check_and_diff_answer_for_what_repair_writes_on_every_session_sample": "every sample, three commands",
}
