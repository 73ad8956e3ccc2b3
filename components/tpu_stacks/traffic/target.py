"""What a user asks of a serving deployment: a throughput, latency limits, request lengths and a pricing model.

Pure data, no Pulumi: the CLI (`tpu-stacks size --output-tokens-per-second`), the stack's `slo` setting and
the policy pack all describe a target with this one type.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Pricing = Literal["on-demand", "spot", "1-year-cud", "3-years-cud"]
"""GKE Inference Quickstart's pricing model names ([GIQ] `Cost.pricing_model`)."""
PRICING_MODELS: tuple[Pricing, ...] = ("on-demand", "spot", "1-year-cud", "3-years-cud")

DEFAULT_PRICING: Pricing = "on-demand"
"""Ours is on-demand: the price anyone can get without a commitment or preemption. GIQ's is `spot`
([GIQ]: "If not provided, `spot` will be used"), and no primary source gives a TPU spot
price here, so a spot answer would be unknown for every slice."""
GIQ_DEFAULT_PRICING: Pricing = "spot"

DEFAULT_INPUT_TOKENS = 1800
DEFAULT_OUTPUT_TOKENS = 128
"""The request shape of Google's vLLM TPU recipe benchmark ([REC-VLLM]: `MAX_INPUT_LEN=1800`,
`MAX_OUTPUT_LEN=128`). GIQ's API carries no request lengths (its profiles have none), so there is no
GIQ default to follow; give yours with --input-tokens/--output-tokens: the answer depends on them."""

OUTPUT_INPUT_COST_RATIO = 4.0
"""[GIQ] `Cost.output_input_cost_ratio`: "If not provided, `4.0` is used"."""


class TrafficTarget(BaseModel):
    """Output tokens per second to carry, the latency limits each request must meet, and the request shape."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    output_tokens_per_second: float = Field(gt=0)
    ntpot_ms: float | None = Field(default=None, gt=0)
    """Normalized time per output token: request latency / output tokens (GIQ's NTPOT)."""
    ttft_ms: float | None = Field(default=None, gt=0)
    """Time to first token."""
    input_tokens: int = Field(default=DEFAULT_INPUT_TOKENS, gt=0)
    output_tokens: int = Field(default=DEFAULT_OUTPUT_TOKENS, gt=0)
    pricing: Pricing = DEFAULT_PRICING
    region: str | None = None
    """Recorded with the answer; the catalogue's prices are not per region (cloud.google.com/tpu/pricing)."""

    def as_dict(self) -> dict[str, object]:
        return {
            "output_tokens_per_second": self.output_tokens_per_second,
            "ntpot_ms": self.ntpot_ms,
            "ttft_ms": self.ttft_ms,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "pricing": self.pricing,
        }
