"""`slo:` in a vLLM or JetStream section: the traffic the stack must carry and the latency it must keep.

One spec for every serving engine, so the key names, units and rules cannot drift between sections.
What it decides is `slo.plan`; this module only parses. Pure (pydantic).
"""

from __future__ import annotations

from pydantic import Field

from tpu_stacks.inputs.field_rules import SpecModel


class SloSpec(SpecModel):
    """A traffic target: the stack's replicas are sized to carry it on the stack's slice (docs/vllm.md)."""

    # SpecModel (field_rules.py): unknown keys, booleans for numbers, infinite numbers and secrets refused.

    output_tokens_per_second: float = Field(gt=0, alias="outputTokensPerSecond")
    """Output tokens per second the stack must generate at its largest size (all replicas together); the replicas
    are sized from it: the maximum replica count must carry it, else the plan refuses."""
    ntpot_ms: float | None = Field(default=None, gt=0, alias="ntpotMs")
    """Normalized time per output token (ms): request latency over output tokens, the most a request may see; a
    slice that cannot keep it at any load is refused."""
    ttft_ms: float | None = Field(default=None, gt=0, alias="ttftMs")
    """Time to first token (ms) a request may see at most; a slice that cannot keep it at any load is refused."""
    input_tokens: int | None = Field(default=None, gt=0, alias="inputTokens")
    """Prompt tokens of a typical request (default: the traffic model's); prefill cost and time to first token grow
    with it, so a RAG workload with long prompts needs more replicas than a chat workload at the same output rate."""
    output_tokens: int | None = Field(default=None, gt=0, alias="outputTokens")
    """Output tokens of a typical request (default: the traffic model's); sets how many requests share a
    replica and the input tokens per second that come with the output rate."""
    profiles: str | None = None
    """A saved GKE Inference Quickstart `FetchProfiles` or `FetchBenchmarkingData` response (JSON; a path relative to
    the Pulumi project): its measurements replace the traffic model's for the model, server and slice they cover
    (basis `profile`). Give the pack's `tpu-slo-capacity` rules the same file (their `profiles` setting)."""
