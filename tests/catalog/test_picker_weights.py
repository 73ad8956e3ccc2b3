"""The picker table's scorer weights and images, each compared with its upstream file as read at the pinned commit
(transcribed here as numbers, not copied).

Sources:
- chat: llm-d/llm-d-router v0.10.0 config/charts/routerlib/templates/_config.yaml lines 75-80, the chart's `default`
  profile: queue-scorer weight 2, kv-cache-utilization-scorer weight 2, prefix-cache-scorer weight 3
  (https://github.com/llm-d/llm-d-router/blob/v0.10.0/config/charts/routerlib/templates/_config.yaml).
- rag: llm-d/llm-d 019a3f3f guides/precise-prefix-cache-aware/scheduler/precise-prefix-cache-aware.values.yaml,
  its `default` profile: precise-prefix-cache-scorer 2.0, kv-cache-utilization-scorer 1.0, queue-scorer 1.0.
- batch: llm-d/llm-d 1a44ba0c guides/batch-serving/asynchronous-processing/multitenant/values/router/
  flow-control.yaml: `featureGates: [flowControl]`, queue-scorer 2, kv-cache-utilization-scorer 2,
  prefix-cache-scorer 3.
- images: llm-d-router v0.10.0 config/charts/routerlib/values.yaml (`registry: ghcr.io/llm-d`, `repository:
  llm-d-router-endpoint-picker`); gateway-api-inference-extension v1.5.0 config/charts/inferencepool/values.yaml
  (`registry: registry.k8s.io`, `repository: gateway-api-inference-extension/epp`, `tag: v1.5.0`).
"""

import pytest

from tpu_stacks.catalog.pickers import PICKERS, WORKLOAD_WEIGHTS, picker

# workload -> (queue, kv cache, prefix cache, flow control), from the files above
UPSTREAM_WEIGHTS = {
    "chat": (2, 2, 3, False),
    "rag": (1, 1, 2, False),
    "batch": (2, 2, 3, True),
}


@pytest.mark.parametrize("workload", sorted(UPSTREAM_WEIGHTS))
def test_each_workload_weighs_its_scorers_as_its_upstream_profile(workload):
    weights = WORKLOAD_WEIGHTS[workload]
    assert (weights.queue, weights.kv_cache, weights.prefix_cache, weights.flow_control) == UPSTREAM_WEIGHTS[workload]


def test_every_workload_has_a_source():
    assert set(WORKLOAD_WEIGHTS) == set(UPSTREAM_WEIGHTS)


@pytest.mark.parametrize(
    "name,image",
    [
        ("llm-d-router", "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0"),
        ("epp-v1.5.0", "registry.k8s.io/gateway-api-inference-extension/epp:v1.5.0"),
    ],
)
def test_each_picker_runs_its_charts_image_at_its_release(name, image):
    assert picker(name) is PICKERS[name]
    assert picker(name).image == image
