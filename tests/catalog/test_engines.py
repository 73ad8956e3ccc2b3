"""The engine catalogue: its pinned versions are the ones the components run, every entry has a source,
and the vLLM component's HPA metrics are read from it."""

from typing import get_args

import pytest

from tpu_stacks import sources
from tpu_stacks.catalog import engines
from tpu_stacks.catalog.engines.ray import RAY
from tpu_stacks.catalog.engines.record import Engine, EngineName
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.tpu import generation_names
from tpu_stacks.jetstream.engine import JETSTREAM
from tpu_stacks.jetstream.spec import FLOW_IMAGES
from tpu_stacks.raytrain.engine import MAXTEXT
from tpu_stacks.raytrain.spec import MAXTEXT_REVISION
from tpu_stacks.saxml.engine import SAXML
from tpu_stacks.saxml.spec import MODEL_IMAGE
from tpu_stacks.vllm.spec import HPA_METRICS, VLLM_IMAGE


def test_pinned_versions_are_the_components_pins():
    assert engines.engine_of_image(VLLM_IMAGE) is VLLM
    assert VLLM_IMAGE.endswith(f":{VLLM.version}")
    for server, _ in FLOW_IMAGES.values():
        found = engines.engine_of_image(server)
        assert found is not None and found.engine == "jetstream" and server.endswith(f":{found.version}")
    assert MAXTEXT.version == MAXTEXT_REVISION
    assert engines.engine_of_image(MODEL_IMAGE) is SAXML and MODEL_IMAGE.endswith(f":{SAXML.version}")


@pytest.mark.parametrize("entry", engines.ENGINES, ids=lambda e: f"{e.engine}-{e.version[:8]}")
def test_every_entry_cites_its_source(entry):
    cited = sources.keys_in(entry.source)
    assert cited or "github" in entry.source.lower() or "/" in entry.source
    assert all(sources.resolves(key) for key in cited), cited
    assert len(entry.source) > 40


def test_vllm_hpa_metrics_come_from_the_catalogue():
    assert HPA_METRICS == {
        "num_requests_waiting": "prometheus.googleapis.com|vllm:num_requests_waiting|gauge",
        "kv_cache_usage_perc": "prometheus.googleapis.com|vllm:kv_cache_usage_perc|gauge",
    }
    for name in HPA_METRICS.values():
        metric = VLLM.metric(name.split("|")[1])
        assert metric is not None and metric.managed_prometheus == name
    # the list's source is the engine's own logger at the pinned tag, the tag the image runs
    assert VLLM.metrics_source == (
        f"https://github.com/vllm-project/vllm/blob/{VLLM.version}/vllm/v1/metrics/loggers.py"
    )


def test_the_pinned_vllm_is_the_tpu_inference_release():
    assert VLLM.version == "v0.29.0"
    assert VLLM_IMAGE == "docker.io/vllm/vllm-tpu:v0.29.0"
    assert "[VLLM-TPU]" in VLLM.source and "[VLLM-SRC]" in VLLM.source


def test_retired_and_renamed_metrics_are_not_in_the_pinned_vllm():
    assert VLLM.metric("vllm:avg_generation_throughput_toks_per_s") is None  # V0 only
    with pytest.raises(KeyError):
        engines.managed_prometheus_name(VLLM, "vllm:avg_generation_throughput_toks_per_s")
    assert VLLM.metric("vllm:prompt_tokens_total").kind == "counter"
    # the GKE tutorial's HPA metric and the dashboards' old names: gone from v0.29.0, each with its new name
    renamed = {r.old: r.new for r in VLLM.renamed}
    assert renamed == {
        "vllm:gpu_cache_usage_perc": "vllm:kv_cache_usage_perc",
        "vllm:gpu_prefix_cache_queries_total": "vllm:prefix_cache_queries_total",
        "vllm:gpu_prefix_cache_hits_total": "vllm:prefix_cache_hits_total",
        "vllm:time_per_output_token_seconds": "vllm:inter_token_latency_seconds",
    }
    kinds = {"vllm:kv_cache_usage_perc": "gauge", "vllm:inter_token_latency_seconds": "histogram"}
    for old, new in renamed.items():
        assert VLLM.metric(old) is None
        assert VLLM.metric(new).kind == kinds.get(new, "counter")
    assert VLLM.renamed_to("vllm:num_requests_waiting") is None


def test_the_pinned_vllm_lists_what_v0_29_0_added():
    # vllm/v1/metrics/loggers.py at v0.29.0 registers a per-request preemption histogram that v0.23.0 did not
    assert VLLM.metric("vllm:request_num_preemptions").kind == "histogram"
    assert VLLM.metric("vllm:num_preemptions_total").kind == "counter"  # the engine-wide counter stays


def test_flags_that_size_each_engine():
    assert {f.name for f in VLLM.flags} >= {
        "--model",
        "--tensor-parallel-size",
        "--max-model-len",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--kv-cache-dtype",
        "--quantization",
    }
    jetstream = engines.engine("jetstream")
    assert jetstream.flag("context").name == "--max_cache_length" and jetstream.flag("context").default == "1024"
    assert {f.name for f in MAXTEXT.flags} >= {"model_name", "per_device_batch_size", "max_target_length"}
    assert SAXML.flags == ()  # the model is published later, not named on the server's command line


def test_images_are_recognised_by_repository_with_any_tag_or_digest():
    assert engines.engine_of_image("vllm/vllm-tpu:latest") is VLLM
    assert engines.engine_of_image("docker.io/vllm/vllm-tpu@sha256:" + "0" * 64) is VLLM
    assert engines.engine_of_image("europe-docker.pkg.dev/p/r/vllm-tpu:v0.9.2") is VLLM  # a mirror
    assert engines.engine_of_image("nginx:1.27") is None
    assert engines.metric_owner("vllm:num_requests_waiting") is VLLM
    # v0.2.3 exports two gauges (with --prometheus_port); later JetStream's histograms are not in that image
    assert engines.metric_owner("jetstream_slots_used_percentage") is JETSTREAM[0]
    assert JETSTREAM[0].metric("jetstream_time_to_first_token") is None
    assert JETSTREAM[1].metrics == ()  # `jpt serve` (v0.2.4) starts no metrics server


def test_the_engine_literal_and_the_sized_engines_are_catalogue_names():
    """The `Literal`s stay for the type checker; these keep them equal to the catalogue."""
    assert set(get_args(EngineName)) == {e.engine for e in engines.ENGINES}
    assert set(get_args(Engine)) - {"generic"} <= {e.engine for e in engines.ENGINES}


def test_served_generations_and_platforms_are_catalogued_generations():
    names = set(generation_names())
    for entry in engines.ENGINES:
        for served in entry.serves or ():
            assert served.generation in names and served.source, (entry.engine, served)
    assert VLLM.serves is None and VLLM.serves_generation("tpu7x")  # None: every generation
    assert [e.served_generations for e in JETSTREAM] == [("v5e",), ("v5e",)]
    assert not JETSTREAM[-1].serves_generation("v6e")
    assert SAXML.platform("v5e") == "tpuv5e" and SAXML.platform("v6e") is None
    assert RAY.served_generations == ("v4", "v5e", "v5p", "v6e")


def test_each_engine_with_an_image_names_its_user_and_each_exporter_its_port():
    for entry in engines.ENGINES:
        assert (entry.user is not None) == bool(entry.images) or entry.engine == "ray", entry.engine
        assert (entry.metrics_port is not None) == bool(entry.metrics), entry.engine
    assert (VLLM.metrics_port, JETSTREAM[0].metrics_port, RAY.metrics_port) == (
        8000,
        9090,
        8080,
    )
    assert RAY.image_user().uid == 1000 and RAY.image_user().home == "/home/ray"
    with pytest.raises(ValueError):
        MAXTEXT.image_user()  # it runs in the Ray image
    with pytest.raises(ValueError):
        SAXML.scrape_port()  # Saxml v1.1.0 serves no metrics
    users = engines.image_users()
    assert {"vllm", "jetstream", "saxml", "ray", "python", "metrics-adapter", "cloud-sdk"} <= set(users)
    assert all(user.source for user in users.values())
