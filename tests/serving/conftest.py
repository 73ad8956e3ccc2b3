"""The pack's `tpu_policies` on sys.path, as tests/policies has it (test_speculative.py reads a server's arguments
with the pack's own reader)."""

import tests.policies.conftest  # noqa: F401
