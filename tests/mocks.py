"""The preview tool's mocks (`tpu_stacks_preview.mocks`, one implementation for the offline plan and
the tests), recording every resource a component declares (inputs as the engine receives them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi

from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.mocks import OfflineMocks, short_hash

TEST_CONFIG = StackConfig(
    project="tests", stack="test", project_dir=Path("."), main=Path("__main__.py"), values={"gcp:project": "proj"}
)
EXISTING_CLUSTER_ENDPOINT = "198.51.100.20"  # what the mocks' getCluster answers


def autonamed(resource_name: str) -> str:
    """The name the mocks give an autonamed bucket, as the provider would add a random suffix."""
    return f"{resource_name}-{short_hash(TEST_CONFIG.project + resource_name)}"


class RecordingMocks(OfflineMocks):
    """The planner's mocks (which record every resource and invoke) with the tests' config."""

    def __init__(self, preview: bool = False) -> None:
        super().__init__(TEST_CONFIG, preview=preview)

    def calls_of(self, token: str) -> list[dict[str, Any]]:
        """The arguments of each invoke of `token`, as the engine received them."""
        return [dict(call.args) for call in self.calls if call.token == token]

    def named(self, typ: str, name: str) -> pulumi.runtime.MockResourceArgs:
        matches = [r for r in self.of_type(typ) if r.name == name]
        assert len(matches) == 1, (typ, name, [r.name for r in self.of_type(typ)])
        return matches[0]


def capture(build: Any, preview: bool = False) -> RecordingMocks:
    """Run `build()` (which declares resources) under fresh mocks and return what it declared."""
    mocks = RecordingMocks(preview=preview)
    pulumi.runtime.set_mocks(mocks, preview=preview)

    @pulumi.runtime.test
    def run() -> Any:
        result = build()
        return getattr(result, "kubeconfig", None) or pulumi.Output.from_input(None)

    run()
    return mocks


def refused(build: Any) -> str:
    """Run `build()` under fresh mocks; it must raise a one-line UserError before declaring anything.

    Returns the error's message for the caller to check.
    """
    from tpu_stacks.errors import UserError

    errors: list[str] = []

    def attempt() -> None:
        try:
            build()
        except UserError as error:
            errors.append(str(error))

    mocks = capture(attempt)
    assert errors, "expected a UserError"
    assert "\n" not in errors[0], errors[0]
    assert mocks.resources == [], "nothing may be half-created"
    return errors[0]


NODE_ROLE = "roles/container.defaultNodeServiceAccount"


def workload_accounts(mocks: RecordingMocks) -> list[pulumi.runtime.MockResourceArgs]:
    """Google service accounts other than the cluster's own node account."""
    return [
        r for r in mocks.of_type("gcp:serviceaccount/account:Account") if not r.inputs["accountId"].endswith("-nodes")
    ]


def project_roles(mocks: RecordingMocks) -> list[str]:
    """Project-level roles granted, other than the nodes' minimal GKE role."""
    return [
        r.inputs["role"] for r in mocks.of_type("gcp:projects/iAMMember:IAMMember") if r.inputs["role"] != NODE_ROLE
    ]
