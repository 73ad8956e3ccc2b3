"""Pulumi's unit-test mocks, recording every resource a component declares (inputs as the
engine receives them, camelCase)."""

from __future__ import annotations

from typing import Any

import pulumi


class RecordingMocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.resources: list[pulumi.runtime.MockResourceArgs] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append(args)
        outputs = dict(args.inputs)
        outputs.setdefault("name", f"{args.name}-a1b2c3")  # what the provider's autonaming would give
        if args.typ == "gcp:serviceaccount/account:Account":
            outputs.setdefault(
                "email", f"{args.inputs['accountId']}@{args.inputs.get('project', 'proj')}.iam.gserviceaccount.com"
            )
        if args.typ == "gcp:container/cluster:Cluster":
            outputs.update(endpoint="203.0.113.10", masterAuth={"clusterCaCertificate": "Q0E="})
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> Any:
        if args.token == "gcp:organizations/getProject:getProject":
            return {"number": "123456789012", "projectId": args.args.get("projectId")}
        if args.token == "gcp:container/getCluster:getCluster":
            return {
                "endpoint": "198.51.100.7",
                "masterAuths": [{"clusterCaCertificate": "Q0E="}],
                "name": args.args["name"],
            }
        raise NotImplementedError(f"no mock for invoke {args.token}")

    def of_type(self, typ: str) -> list[pulumi.runtime.MockResourceArgs]:
        return [r for r in self.resources if r.typ == typ]

    def named(self, typ: str, name: str) -> pulumi.runtime.MockResourceArgs:
        matches = [r for r in self.of_type(typ) if r.name == name]
        assert len(matches) == 1, (typ, name, [r.name for r in self.of_type(typ)])
        return matches[0]


def capture(build: Any, preview: bool = False) -> RecordingMocks:
    """Run `build()` (which declares resources) under fresh mocks and return what it declared."""
    mocks = RecordingMocks()
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
