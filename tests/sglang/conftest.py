"""The pack's `tpu_policies` on sys.path, as tests/policies has it (test_engine.py reads SGLang's flags with it)."""

import tests.policies.conftest  # noqa: F401
