"""The owners as judges (issue 35): the real Claude Code and Codex resume a session offline,
the original file and the file ``normalizer.repair_session`` wrote, against a stub of their
provider's API that applies its pairing rules; see conftest.py and drive.py."""
