"""The precise prefix cache of `vllm.gateway` (vllm/kv_events.py): the block size the router hashes in is the one the
servers run with, the servers publish where and under the topic the router reads, the port is open both ways, the
config wires token producer -> precise producer -> prefix scorer, and the render sidecar is hardened. Each test reads
the rendered objects (or the decided plan) and would fail on the mistake its name says."""

import json
from pathlib import Path

import pytest
import yaml

from tests.shipped import shipped
from tpu_stacks.catalog.engines.router import ROUTER
from tpu_stacks.catalog.kv_pages import tpu_page_size
from tpu_stacks.catalog.pickers import ROUTER_PICKER
from tpu_stacks.catalog.upstream import number, text
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.serving.engine_flags import flag_value
from tpu_stacks.vllm import kv_events
from tpu_stacks.vllm.gateway_plan import CONFIG_FILE, PICKER_LABELS, PICKER_NAME
from tpu_stacks.vllm.monitoring import vllm_sections, vllm_target
from tpu_stacks.vllm.network import network
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec
from tpu_stacks_preview.monitoring import promql_metrics

CLUSTER = ClusterSpec(project="proj", location="us-central1-b")
ON = {"enabled": True}
SERVERS = {"app": "vllm-tpu"}


def plan(gateway=None, **spec):
    fields = {"model": "meta-llama/Llama-3.1-70B", "api_key": True, "gateway": {**ON, **(gateway or {})}, **spec}
    return plan_vllm(VllmSpec(**fields), CLUSTER, hf_token_given=True, api_key_given=True)


def refusal(**kwargs) -> UserError:
    with pytest.raises(UserError) as caught:
        plan(**kwargs)
    return caught.value


@pytest.fixture(scope="module")
def stack():
    capture_ = shipped("vllm-gateway")
    assert capture_.error is None, capture_.error
    return capture_


def _named(capture_, kind, name):
    (found,) = [
        r.inputs
        for r in capture_.sorted_resources()
        if r.type.endswith(f":{kind}") and (r.inputs.get("metadata") or {}).get("name") == name
    ]
    return found


def _config(capture_) -> dict:
    return yaml.safe_load(_named(capture_, "ConfigMap", PICKER_NAME)["data"][CONFIG_FILE])


def _plugin(config: dict, plugin_type: str) -> dict:
    (found,) = [p for p in config["plugins"] if p["type"] == plugin_type]
    return found


def _server_args(capture_) -> list[str]:
    (container,) = _named(capture_, "Deployment", "vllm-tpu")["spec"]["template"]["spec"]["containers"]
    return container["args"]


def _events_config(args: list[str]) -> dict:
    value = flag_value(args, "--kv-events-config")
    assert value is not None, args
    return json.loads(value)


# -- the block size -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_model_len", "max_num_seqs", "page"),
    [
        (100, 128, 16),  # a sixteenth of 128 is 8: the floor
        (1024, 128, 64),
        (4096, 128, 256),  # the shipped stack: 4096 / 16
        (8192, 128, 256),  # 512, capped
        (8193, 128, 16),  # long context: 16 ...
        (16384, 256, 32),  # ... raised so 256 sequences' block tables fit half the SMEM (512 pages each)
        (32768, 1024, 256),  # 128 pages per request: 256-token pages
    ],
)
def test_the_page_size_is_tpu_inferences_choice_at_each_boundary(max_model_len, max_num_seqs, page):
    assert tpu_page_size(max_model_len, max_num_seqs) == page


def test_the_routers_blocks_are_the_servers_pages_not_its_default_of_16(stack):
    """Read from the rendered objects: the router's blockSizeTokens is what tpu-inference picks for the servers'
    --max-model-len and --max-num-seqs, which for the shipped stack is not the router's default."""
    args = _server_args(stack)
    server_page = tpu_page_size(
        int(flag_value(args, "--max-model-len") or 0), int(flag_value(args, "--max-num-seqs") or 0)
    )
    producer = _plugin(_config(stack), text("router.plugin.precise-prefix-cache-producer"))
    router_block = producer["parameters"]["tokenProcessorConfig"]["blockSizeTokens"]
    assert router_block == server_page == 256
    assert router_block != number("router.kvblock.default-block-size")  # leaving it unset would be a mismatch
    assert flag_value(args, "--block-size") is None  # the servers keep their own choice


def test_a_block_size_given_in_extra_args_is_the_routers_too():
    decided = plan(extra_args=["--block-size=64"])
    assert decided.gateway.block_size == 64
    blocks = decided.gateway.picker_config()["plugins"][1]["parameters"]["tokenProcessorConfig"]["blockSizeTokens"]
    assert blocks == 64


def test_a_block_size_that_is_not_a_number_is_refused_in_one_line():
    error = refusal(extra_args=["--block-size", "big"])
    assert error.key == "vllm.extraArgs" and "--block-size" in str(error)


# -- what the servers publish ------------------------------------------------------------------------------------


def test_the_servers_publish_on_the_port_and_topic_the_router_subscribes_to(stack):
    """vLLM binds the endpoint; the router dials each pod on its socket port and keeps only `kv@` topics, reading
    `kv@<pod>@<model>` (common.go parseTopic: three parts or no model); the model part must be the name requests
    use, or every event's block keys differ from every request's."""
    args = _server_args(stack)
    config = _events_config(args)
    assert config["enable_kv_cache_events"] is True and config["publisher"] == "zmq"
    assert config["endpoint"].rsplit(":", 1)[1] == str(number("router.kv-events-port")) == "5557"
    topic = config["topic"]
    assert topic.startswith(text("router.kv-events.topic-filter"))
    parts = topic.split("@")
    assert len(parts) == 3 and parts[2] == flag_value(args, "--model") == "meta-llama/Llama-3.1-70B"
    token_producer = _plugin(_config(stack), text("router.plugin.token-producer"))
    assert token_producer["parameters"]["modelName"] == parts[2]


def test_the_topic_follows_a_served_model_name():
    decided = plan(extra_args=["--served-model-name", "llama"])
    config = _events_config(decided.engine_args())
    assert config["topic"].split("@")[2] == "llama" == decided.gateway.model


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--kv-events-config", "{}"], "--kv-events-config"),
        (["--data-parallel-size=2"], "--data-parallel-size"),
    ],
)
def test_extra_args_the_precise_path_would_contradict_are_refused(extra, flag):
    error = refusal(extra_args=extra)
    assert error.key == "vllm.extraArgs" and flag in str(error) and "prefixCache: approximate" in str(error)
    assert plan(gateway={"prefix_cache": "approximate"}, extra_args=extra).gateway is not None  # fine there


def test_the_precise_path_needs_the_router_and_the_key_needs_a_gateway():
    error = refusal(gateway={"picker": "epp-v1.5.0", "prefix_cache": "precise"})
    assert error.key == "vllm.gateway.prefixCache"
    assert not plan(gateway={"picker": "epp-v1.5.0"}).gateway.precise  # the legacy picker defaults to approximate
    with pytest.raises(UserError) as caught:
        plan_vllm(
            VllmSpec(
                model="meta-llama/Llama-3.1-70B", source_ranges=["10.0.0.0/8"], gateway={"prefix_cache": "precise"}
            ),
            CLUSTER,
            hf_token_given=True,
            api_key_given=True,
        )
    assert "vllm.gateway.prefixCache" in str(caught.value)


# -- the picker's config -----------------------------------------------------------------------------------------


def test_the_scorer_reads_the_precise_producer_which_reads_the_token_producer_and_the_pools_endpoints(stack):
    """Every reference resolves: the scorer names the precise producer (without it, it reads the approximate one),
    the producer is fed endpoints by the endpoint-notification-source (it asks for none itself) and tokens by the
    token producer, which renders on loopback where the sidecar listens; the metrics source is declared beside it
    (declaring sources stops the router from injecting it)."""
    config = _config(stack)
    declared = {p["type"] for p in config["plugins"]}
    precise = text("router.plugin.precise-prefix-cache-producer")
    scorer = _plugin(config, text("router.plugin.prefix-cache-scorer"))
    assert scorer["parameters"][text("router.prefix-scorer.producer-name")] == precise
    assert {
        precise,
        text("router.plugin.token-producer"),
        text("router.plugin.endpoint-notification-source"),
    } <= declared
    sources = {s["pluginRef"]: [e["pluginRef"] for e in s["extractors"]] for s in config["dataLayer"]["sources"]}
    assert sources == {
        "metrics-data-source": ["core-metrics-extractor"],
        text("router.plugin.endpoint-notification-source"): [precise],
    }
    refs = {s for s in sources} | {e for es in sources.values() for e in es}
    refs |= {p["pluginRef"] for profile in config["schedulingProfiles"] for p in profile["plugins"]}
    assert refs <= declared
    assert _plugin(config, precise)["parameters"]["indexerConfig"]["kvBlockIndexConfig"]["enableMetrics"] is True
    url = _plugin(config, text("router.plugin.token-producer"))["parameters"]["vllm"]["url"]
    pod = _named(stack, "Deployment", PICKER_NAME)["spec"]["template"]["spec"]
    (render,) = [c for c in pod["containers"] if c["name"] == "vllm-render"]
    assert url == f"http://localhost:{render['ports'][0]['containerPort']}"
    assert render["args"][0] == _plugin(config, text("router.plugin.token-producer"))["parameters"]["modelName"]


def test_approximate_adds_no_producer_no_sidecar_and_no_events():
    decided = plan(gateway={"prefix_cache": "approximate"})
    types = {p["type"] for p in decided.gateway.picker_config()["plugins"]}
    assert not types & {text("router.plugin.precise-prefix-cache-producer"), text("router.plugin.token-producer")}
    assert "dataLayer" not in decided.gateway.picker_config()
    assert flag_value(decided.engine_args(), "--kv-events-config") is None
    server, picker = network(decided, SERVERS)
    assert kv_events.KV_EVENTS_PORT not in {f.port for f in (*server.flows, *picker.flows)}


# -- connectivity --------------------------------------------------------------------------------------------------


def _ports(policy: dict, direction: str, selector: dict) -> set[int]:
    peer_key = "from" if direction == "ingress" else "to"
    return {
        port["port"]
        for rule in policy["spec"].get(direction, [])
        if any(p.get("podSelector", {}).get("matchLabels") == selector for p in rule.get(peer_key, []))
        for port in rule.get("ports", [])
    }


def test_the_picker_may_dial_the_servers_events_port_and_only_the_picker_may(stack):
    """Rendered NetworkPolicies: the servers admit the picker (and nobody else) on 5557, the picker may leave for
    the servers on it; ZMQ over TCP, the router connecting to the server's bound socket."""
    port = kv_events.KV_EVENTS_PORT
    servers = _named(stack, "NetworkPolicy", "vllm-server")
    picker = _named(stack, "NetworkPolicy", PICKER_NAME)
    assert port in _ports(servers, "ingress", PICKER_LABELS)
    admitted = [rule for rule in servers["spec"]["ingress"] if port in {p["port"] for p in rule.get("ports", [])}]
    assert all(p.get("podSelector", {}).get("matchLabels") == PICKER_LABELS for rule in admitted for p in rule["from"])
    assert port in _ports(picker, "egress", SERVERS)


# -- the render sidecar --------------------------------------------------------------------------------------------


def _render(pod: dict) -> dict:
    (render,) = [c for c in pod["containers"] if c["name"] == "vllm-render"]
    return render


def test_the_render_sidecar_is_pinned_hardened_sized_and_keeps_no_api_token(stack):
    pod = _named(stack, "Deployment", PICKER_NAME)["spec"]["template"]["spec"]
    render = _render(pod)
    assert render["image"] == kv_events.RENDER_IMAGE == "docker.io/vllm/vllm-openai-cpu:v0.19.1"
    assert render["command"] == ["vllm", "launch", "render"]
    security = render["securityContext"]
    assert (
        security["runAsNonRoot"] and security["readOnlyRootFilesystem"] and security["capabilities"]["drop"] == ["ALL"]
    )
    assert not security["allowPrivilegeEscalation"]
    assert render["resources"]["requests"]["cpu"] and render["resources"]["requests"]["memory"]
    assert render["resources"]["limits"]["memory"]
    (shadow,) = [m for m in render["volumeMounts"] if m["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == shadow["name"]]
    assert "emptyDir" in volume  # the API token the picker's pod mounts does not reach the renderer
    env = {e["name"]: e.get("value") for e in render["env"]}
    assert env["HF_TOKEN_PATH"].startswith("/var/run/secrets/huggingface/")  # Llama 3.1 is gated
    assert "HF_TOKEN" not in env  # the token is a file, never an environment value


def test_an_ungated_models_renderer_gets_no_token(tmp_path):
    from tests.vllm.test_gateway import _stack_with  # the shipped stack with settings changed

    capture_ = _stack_with(tmp_path, model="Qwen/Qwen2.5-7B-Instruct")
    pod = _named(capture_, "Deployment", PICKER_NAME)["spec"]["template"]["spec"]
    assert "HF_TOKEN_PATH" not in {e["name"] for e in _render(pod)["env"]}
    assert not [v for v in pod["volumes"] if "secret" in v]


# -- the dashboard -------------------------------------------------------------------------------------------------


def test_the_index_metrics_are_the_routers_names_and_on_the_dashboard_only_when_precise():
    """The names are the ledger's (subsystem `llm_d_router_epp` + each collector name), catalogued for the router,
    and drawn only when the producer that exports them runs."""
    subsystem = text("router.metric.kv-subsystem")
    kv_index = ROUTER_PICKER.metrics.kv_index
    assert kv_index is not None
    rows = {
        "lookups": "router.metric.kv-index-lookups",
        "hits": "router.metric.kv-index-hits",
        "admissions": "router.metric.kv-index-admissions",
        "evictions": "router.metric.kv-index-evictions",
        "subscribers": "router.metric.kv-events-subscribers",
        "messages": "router.metric.kv-events-messages",
        "errors": "router.metric.kv-events-zmq-errors",
    }
    assert kv_index.model_dump() == {field: f"{subsystem}_{text(row)}" for field, row in rows.items()}
    assert all(ROUTER.metric(name) is not None for name in kv_index.model_dump().values())

    def names(decided) -> set[str]:
        section = vllm_sections(vllm_target(decided, "vllm-hpa", "vllm-tpu", "vllm-tpu"))[-1]
        queries = [ds.time_series_query.prometheus_query for w in section.widgets for ds in w.xy_chart.data_sets]
        return {name for query in queries for name in promql_metrics(query)}

    assert set(kv_index.model_dump().values()) <= names(plan())
    assert not set(kv_index.model_dump().values()) & names(plan(gateway={"prefix_cache": "approximate"}))


def test_the_docs_name_both_choices_with_their_reason():
    page = (Path(__file__).resolve().parents[2] / "docs" / "gateway.md").read_text()
    assert "possible on TPU, not built yet" not in page
    rows = [line for line in page.splitlines() if line.startswith("| `prefixCache: ")]
    assert [row.split("`")[1] for row in rows] == ["prefixCache: precise", "prefixCache: approximate"]
    assert all(len(row.split("|")[2].strip()) > 20 for row in rows)  # each with its one-line reason


# -- the render sidecar answers to the servers' name and tokenizes as they do ---------------------------------------


def _render_args(decided) -> list[str]:
    """The sidecar's arguments, as the picker's pod gets them (vllm/gateway.py render_container)."""
    from tpu_stacks.vllm.gateway import render_container

    return list(render_container(decided.gateway).args)


def test_with_a_served_model_name_the_renderer_loads_the_model_and_answers_to_the_name():
    """`vllm launch render <model>` fetches `<model>` from Hugging Face and refuses a request naming anything but its
    served names (ledger: vllm.launch-render.model-tag, vllm.launch-render.served-names, vllm.render.check-model):
    given the served name as its model it would fetch a repository that does not exist, and never become ready."""
    decided = plan(extra_args=["--served-model-name", "llama"])
    args = _render_args(decided)
    token_producer = decided.gateway.picker_config()["plugins"][0]
    assert token_producer["type"] == text("router.plugin.token-producer")
    assert args[0] == "meta-llama/Llama-3.1-70B" == decided.model.id  # what the servers' --model loads
    assert flag_value(args, "--served-model-name") == "llama" == token_producer["parameters"]["modelName"]
    assert args[-1] == f"--port={kv_events.RENDER_PORT}"


def test_without_a_served_model_name_the_renderer_is_run_as_the_chart_runs_it():
    assert _render_args(plan()) == ["meta-llama/Llama-3.1-70B", f"--port={kv_events.RENDER_PORT}"]


def test_the_servers_tokenizer_flags_reach_the_renderer():
    extra = ["--tokenizer", "org/tok", "--tokenizer-mode=slow", "--revision=abc", "--trust-remote-code", "--seed=3"]
    args = _render_args(plan(extra_args=extra))
    assert flag_value(args, "--tokenizer") == "org/tok"
    assert flag_value(args, "--tokenizer-mode") == "slow"
    assert flag_value(args, "--revision") == "abc"
    assert "--trust-remote-code" in args
    assert "--seed=3" not in args  # only what chooses the tokenizer


def test_turning_prefix_caching_off_is_refused_with_the_precise_path():
    """No cached block, no BlockStored event (ledger: vllm.kv-events.needs-prefix-caching): the index would stay
    empty while vLLM only warns."""
    error = refusal(extra_args=["--no-enable-prefix-caching"])
    assert error.key == "vllm.extraArgs" and "--no-enable-prefix-caching" in str(error)
    assert "prefixCache: approximate" in str(error)
    assert plan(gateway={"prefix_cache": "approximate"}, extra_args=["--no-enable-prefix-caching"]).gateway
