"""A frozen copy of the log post-mortem as it was before the chunked scan (commit b5d9bf6): the per-line reference.

tests/logs/test_fast_paths.py compares ``triage.logs.analyze_log`` with ``reference.analyze.analyze_log`` on every
recorded log and on the bench's built file: findings, episodes, summary and samples must be equal. These files are
not maintained; they only change when the analysis is meant to read a log differently.
"""
