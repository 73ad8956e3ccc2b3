"""Decisions of vllm/multihost_plan.py that `make mutation` found unpinned (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import pytest

from tests.vllm.test_multihost import ONE_SLICE, plan
from tpu_stacks.errors import UserError
from tpu_stacks.vllm.multihost_plan import controller_env, start_attempts


def test_serve_allows_nineteen_starts_of_a_replica_before_giving_up():
    """By hand: a TPU node from zero 15 min + the image 10 min (objects/awaits.py NODE_PROVISIONING_MINUTES,
    IMAGE_PULL_MINUTES) + the host's own start 5 min = 1800 s, over Ray 2.60.0's 100 s reservation timeout
    (ray/_private/accelerators/tpu.py DEFAULT_TPU_HEAD_RESERVATION_TIMEOUT_S; ledger: ray.tpu.head-reservation-timeout)
    = 18 starts that may time out, plus the one that succeeds: 19."""
    assert start_attempts() == 19
    assert controller_env() == {"RAY_SERVE_MAX_PER_REPLICA_RETRY_COUNT": "19"}


def test_the_first_extra_argument_is_the_one_named():
    """The refusal names `vllm.extraArgs[0]`, so the value shown is that one's, not the last one's."""
    with pytest.raises(UserError) as error:
        plan(replicas=ONE_SLICE, extra_args=["--enforce-eager", "--seed=1"])
    assert str(error.value).startswith("vllm.extraArgs[0]: '--enforce-eager' cannot be given on the multi-host")
