"""`vllm.disaggregation` (prefill and decode on separate pools), refused at the pinned releases: both ends of the
KV transfer must speak one connector, and vLLM TPU and llm-d's P/D sidecar share none (docs/gateway.md, "Prefill
and decode apart"). Kept apart from gateway_plan so that lifting the refusal, when a release pair supports it, is a
change here and in the catalogue only.
"""

from __future__ import annotations

from tpu_stacks.errors import UserError
from tpu_stacks.vllm.spec import VllmSpec

DISAGGREGATION_MISSING = (
    "needs a prefill/decode KV transfer both ends speak, and the pinned releases have none: tpu-inference 0.29.0 "
    "accepts only TPUConnector, TPUConnectorHMA, TPUOffloadConnector and RaidenOffloadConnector, llm-d's P/D sidecar "
    "(v0.10.0) only nixlv2, shared-storage, sglang, mooncake and offloading"
)
"""Why `vllm.disaggregation` is refused (docs/gateway.md, "Prefill and decode apart"; ledger:
tpu-inference.kv-connectors, router.sidecar.kv-connectors; another engine says what it has in its own folder's
gateway answer, catalog/engines/declared.py GatewaySupport)."""


def check_disaggregation(spec: VllmSpec) -> None:
    """Refuse `vllm.disaggregation` in one line naming the support the pinned releases lack."""
    if spec.disaggregation is not None:
        raise UserError(
            "vllm.disaggregation",
            spec.disaggregation,
            DISAGGREGATION_MISSING,
            "remove vllm.disaggregation (one pool serves prefill and decode)",
        )
