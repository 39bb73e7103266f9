"""The owners as judges (issue 35): the real Claude Code and Codex resume a session offline,
the original file and the file ``normalizer.repair_session`` wrote, against a stub of their
provider's API that applies its pairing rules (stub.py); drive.py runs them and compares
the two requests; conftest.py picks the owners and lists the known defects.

Run: ``eval "$(.ci/owners.sh /tmp/owners)" && python -m pytest tests/owners`` (the install
takes 10 to 40 s; the suite 2 to 3 minutes on 2 busy cores: about 140 resumes of 0.2 to 2 s
each, two at a time). Without the owners the tests skip; under ``CI=true`` they fail.
"""
