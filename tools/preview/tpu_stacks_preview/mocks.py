"""Stand-ins for the providers: the components' own testing mocks (`tpu_stacks.testing.Mocks`, the one
source of the provider answers, which users' unit tests get too), fed the stack's config and the wire
values this planner's monitor sends.

In preview mode a resource returns only its inputs, so the SDK marks every computed output
unknown, exactly as a real preview of a new stack does. In up mode the resources this project
uses return plausible computed values (cluster endpoint and CA, service-account email, bucket
name), so `apply()` code such as kubeconfig building runs too. Invokes without a mock raise.
"""

from __future__ import annotations

from typing import Any

from tpu_stacks.testing import (
    CLUSTER_ENDPOINT,
    OFFERED_CHANNELS,
    OFFERED_MASTER_VERSIONS,
    PROJECT_NUMBER,
    Mocks,
    short_hash,
)
from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.wire import unwrap

__all__ = [
    "CLUSTER_ENDPOINT",
    "OFFERED_CHANNELS",
    "OFFERED_MASTER_VERSIONS",
    "PROJECT_NUMBER",
    "OfflineMocks",
    "short_hash",
]


class OfflineMocks(Mocks):
    """The components' mocks with the stack's config; autonamed buckets seeded by the Pulumi project."""

    def __init__(self, config: StackConfig, *, preview: bool) -> None:
        super().__init__(config.values, preview=preview, seed=config.project)
        self.config = config

    def setting(self, key: str) -> str | None:
        """The stack's config value (`gcp:project`), read when asked: a caller may swap the config."""
        return self.config.get(key)

    def plain(self, value: Any) -> Any:
        """Wire values (secrets and outputs tagged, unknowns as the sentinel) as plain ones."""
        return unwrap(value)
