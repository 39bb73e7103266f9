from __future__ import annotations
def run_explain(*a, **k): return 0
