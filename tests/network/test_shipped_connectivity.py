"""Every shipped stack's NetworkPolicies against the connectivity contract they carry, and against the
flows its rendered objects imply (Services and their callers, APIServices, PodMonitorings, Ray ports),
with network-config-analyzer as the independent model (tests/network/contract.py and
tests/network/expectations.py say what is checked).

Needs the `tpu-stacks.dev/flows` annotation on every generated NetworkPolicy (issue 24, Build item 1):
a policy or pod without one is a failure here, never a skip. Needs PyPI once, to make nca's venv.
"""

import pytest

from tests.network.contract import check
from tests.stacks.test_security import objects
from tests.stacks.test_shipped_stacks import STACKS


@pytest.mark.network
@pytest.mark.flows_contract
@pytest.mark.parametrize("stack", STACKS)
def test_every_contract_flow_and_expectation_is_allowed_and_no_ingress_is_wider(stack, nca):
    failures = check(objects(stack), nca=nca)
    assert not failures, "\n" + "\n".join(f"{stack}: {line}" for line in failures)
