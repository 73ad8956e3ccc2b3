"""inference-pool-serves on raw programs: hand-written InferencePools, endpoint-picker Services and HTTPRoutes
declared with pulumi-kubernetes (no project component), judged against the model servers the same program runs."""

from typing import Any

import pulumi_kubernetes as k8s
import yaml

from tests.policies import objects as o
from tests.policies.harness import UNKNOWN_STRING, capture, of, raw, run
from tpu_stacks.catalog.inference_gateway import INFERENCE_POOL_API_VERSION

POLICY = "inference-pool-serves"
VLLM_IMAGE = "vllm/vllm-tpu:73aa7041bfee43581314e6f34e9a657137ecc092"
JETSTREAM_IMAGE = "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pytorch-server:v0.2.3"
JETSTREAM_HTTP = "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-http:v0.2.2"
V6E = "tpu-v6e-slice"


def vllm_pod(port_args: list[str], ports: list[int] | None = None) -> dict[str, Any]:
    """The GKE vLLM tutorial's server ([K-VLLM]), with the `--port` arguments and container ports a test gives."""
    spec = o.pod(
        V6E,
        "2x4",
        8,
        image=VLLM_IMAGE,
        command=["python3", "-m", "vllm.entrypoints.openai.api_server"],
        args=["--host=0.0.0.0", *port_args, "--tensor-parallel-size=8", "--model=meta-llama/Llama-3.1-8B"],
    )
    if ports is not None:
        spec["containers"][0]["ports"] = [{"containerPort": p} for p in ports]
    return spec


def jetstream_pod() -> dict[str, Any]:
    """The JetStream-PyTorch tutorial's pod ([K-JETSTREAM-CONV]): the engine (gRPC 9000) and jetstream-http (8000)."""
    spec = o.pod("tpu-v5-lite-podslice", "2x4", 8, image=JETSTREAM_IMAGE, args=["--size=7b", "--model_name=gemma"])
    spec["containers"][0]["ports"] = [{"containerPort": 9000}]
    spec["containers"].append({"name": "jetstream-http", "image": JETSTREAM_HTTP, "ports": [{"containerPort": 8000}]})
    return spec


def picker_service(name: str = "vllm-epp", namespace: str = "serving", port: int = 9002) -> k8s.core.v1.Service:
    return k8s.core.v1.Service(
        name,
        metadata={"name": name, "namespace": namespace},
        spec={"selector": {"app": name}, "ports": [{"name": "grpc-ext-proc", "port": port, "protocol": "TCP"}]},
    )


def pool(
    name: str = "vllm-pool",
    labels: dict[str, str] | None = None,
    port: Any = 8000,
    picker: str = "vllm-epp",
    picker_port: int = 9002,
    namespace: str = "serving",
) -> o.CustomResource:
    """A hand-written pool in upstream's shape (gateway-api-inference-extension v1.5.0 inferencepool chart)."""
    return o.CustomResource(
        name,
        api_version=INFERENCE_POOL_API_VERSION,
        kind="InferencePool",
        metadata={"name": name, "namespace": namespace},
        spec={
            "selector": {"matchLabels": labels or {"app": "vllm-tpu"}},
            "targetPorts": [{"number": port}],
            "endpointPickerRef": {"name": picker, "port": {"number": picker_port}, "failureMode": "FailClose"},
        },
    )


def route(pool_name: str = "vllm-pool", group: str = "inference.networking.k8s.io") -> o.CustomResource:
    return o.CustomResource(
        "llm-route",
        api_version="gateway.networking.k8s.io/v1",
        kind="HTTPRoute",
        metadata={"name": "llm-route", "namespace": "serving"},
        spec={
            "parentRefs": [{"name": "inference-gateway"}],
            "rules": [{"backendRefs": [{"group": group, "kind": "InferencePool", "name": pool_name}]}],
        },
    )


def program(server=None, *extra):
    """A hand-written program: one vLLM Deployment (`app: vllm-tpu`), its picker's Service, a pool and a route."""

    def build():
        o.deployment("vllm-tpu", server if server is not None else vllm_pod(["--port=8000"]))
        picker_service()
        for make in extra or (pool, route):
            make()

    return build


def problems(build) -> list[str]:
    diagnostics = run(capture(build))
    assert not [d for d in diagnostics if "can't run policy" in d.message]
    found = of(diagnostics, POLICY)
    assert {d.level for d in found} <= {"mandatory"}
    return [d.message for d in found]


def test_a_hand_written_pool_route_and_picker_in_front_of_vllm_pass():
    assert problems(program()) == []


def test_a_selector_that_matches_no_serving_pod_is_refused():
    (message,) = problems(program(None, lambda: pool(labels={"app": "vllm"}), route))
    assert message.startswith("InferencePool serving/vllm-pool: spec.selector.matchLabels {app: vllm} matches no")
    assert "Deployment serving/vllm-tpu (app=vllm-tpu)" in message and "set it to labels of the model server" in message


def test_a_pool_in_another_namespace_than_its_servers_matches_nothing():
    build = program(None, lambda: pool(namespace="gateway"), lambda: picker_service(namespace="gateway"))
    (message,) = problems(build)
    assert message.startswith("InferencePool gateway/vllm-pool: spec.selector.matchLabels {app: vllm-tpu}")
    assert "no Deployment, StatefulSet, LeaderWorkerSet or RayService runs in its namespace" in message


def test_a_target_port_the_server_does_not_listen_on_is_refused():
    (message,) = problems(program(None, lambda: pool(port=8080)))
    assert message == (
        "InferencePool serving/vllm-pool: spec.targetPorts[0].number 8080 is not a port every matched server listens "
        "on (Deployment serving/vllm-tpu listens on 8000); set it to the engine's HTTP port, and select only the "
        "servers that serve on it"
    )


def _labelled(name: str, spec: dict[str, Any]) -> k8s.apps.v1.Deployment:
    """A Deployment whose pods carry `tier: llm` beside their own `app` label."""
    labels = {"app": name, "tier": "llm"}
    return k8s.apps.v1.Deployment(
        name,
        metadata={"name": name, "namespace": "serving"},
        spec={"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": spec}},
    )


def test_a_target_port_only_some_matched_servers_listen_on_is_refused():
    """The pool's endpoints are every matched pod at every target port: vLLM (8000) and another server on 9000
    under one selector, with targetPorts 9000, sends part of the traffic to a port vLLM does not open."""
    other = vllm_pod(["--port=9000"])

    def build(target: int, both: bool = True):
        def make():
            _labelled("vllm-a", vllm_pod(["--port=8000"]))
            _labelled("vllm-b", other)
            picker_service()
            pool(labels={"tier": "llm"} if both else {"app": "vllm-b"}, port=target)

        return make

    (message,) = problems(build(9000))
    assert (
        message.startswith(
            "InferencePool serving/vllm-pool: spec.targetPorts[0].number 9000 is not a port every matched server "
            "listens on (Deployment serving/vllm-a"
        )
        and "listens on 8000" in message
    )
    assert problems(build(9000, both=False)) == []  # the pool that selects only the server on 9000
    assert len(problems(build(8000))) == 1  # and 8000 is refused the other way round


def test_the_engine_port_comes_from_its_flag_or_the_catalogue_default():
    """`--port 9000` moves vLLM; without the flag vLLM listens on the catalogue's default, 8000."""
    moved = vllm_pod(["--port", "9000"])
    assert problems(program(moved, lambda: pool(port=9000))) == []
    assert "spec.targetPorts[0].number 8000 is not a port" in problems(program(moved, pool))[0]
    assert problems(program(vllm_pod([]), pool)) == []
    assert problems(program(vllm_pod([], ports=[8081]), lambda: pool(port=8081))) == []  # a declared port counts


def test_a_picker_reference_that_names_no_service_or_no_port_of_it_is_refused():
    (missing,) = problems(program(None, lambda: pool(picker="epp"), route))
    assert missing == (
        "InferencePool serving/vllm-pool: spec.endpointPickerRef.name epp names no Service in namespace serving "
        "(Services there: vllm-epp); name the endpoint picker's Service"
    )
    (port,) = problems(program(None, lambda: pool(picker_port=9003), route))
    assert port == (
        "InferencePool serving/vllm-pool: spec.endpointPickerRef.port.number 9003 is not a port of Service vllm-epp "
        "(9002); use the picker's ext-proc port (9002 by default)"
    )


def test_a_jetstream_backend_is_refused_because_it_does_not_speak_openai():
    (message,) = problems(program(jetstream_pod(), pool, route))
    assert message.startswith(
        "InferencePool serving/vllm-pool: spec.selector.matchLabels selects Deployment serving/vllm-tpu, a jetstream "
        "v0.2.3 server, which the endpoint picker cannot front: JetStream answers gRPC"
    )
    assert message.endswith(
        "route to it through its Service (an HTTPRoute backendRef of kind Service) or serve the model with vLLM"
    )


def sglang_pod() -> dict[str, Any]:
    """An SGLang-JAX server on its default port (30000), recognised by its launch module."""
    return o.pod(
        V6E,
        "2x2",
        4,
        image="us-docker.pkg.dev/p/r/sglang-jax:0.0.1.post1",
        command=["python3", "-m", "sgl_jax.launch_server"],
        args=["--model-path=Qwen/Qwen3-8B", "--tp-size=4", "--host=0.0.0.0"],
    )


def test_a_pool_in_front_of_sglang_is_refused_by_the_engine_s_gateway_answer_not_its_api():
    """SGLang-JAX speaks OpenAI's APIs, but its gateway answer is "no" (no gauges for the picker): the pack asks the
    same capability the engine declares (catalog/inference_gateway.gateway_support), and reports its reason."""
    from tpu_stacks.catalog.inference_gateway import gateway_support, serving_api

    assert serving_api("sglang").openai and not gateway_support("sglang").fronts
    (message,) = problems(program(sglang_pod(), lambda: pool(port=30000), route))
    assert message.startswith(
        "InferencePool serving/vllm-pool: spec.selector.matchLabels selects Deployment serving/vllm-tpu, a sglang "
        "0.0.1.post1 server, which the endpoint picker cannot front: sglang-jax 0.0.1.post1 exports no metrics"
    )
    assert problems(program()) == []  # the same pool in front of vLLM passes: its answer is yes


def test_a_route_to_a_pool_the_stack_does_not_declare_or_in_the_wrong_group_is_refused():
    (missing,) = problems(program(None, pool, lambda: route("vllm")))
    assert missing == (
        "HTTPRoute serving/llm-route: spec.rules[0].backendRefs[0] names InferencePool vllm, which this stack does "
        "not declare in namespace serving (pools there: vllm-pool); name one of them or declare the pool"
    )
    (group,) = problems(program(None, pool, lambda: route(group="inference.networking.x-k8s.io")))
    assert group == (
        "HTTPRoute serving/llm-route: spec.rules[0].backendRefs[0].group inference.networking.x-k8s.io is not "
        "InferencePool vllm-pool's API group; set group: inference.networking.k8s.io"
    )


def rayservice(image: str = VLLM_IMAGE) -> o.CustomResource:
    """Multi-host vLLM behind Ray Serve LLM: KubeRay labels the head `ray.io/node-type: head`."""
    head = {"containers": [{"name": "ray-head", "image": image, "ports": [{"containerPort": 8000, "name": "serve"}]}]}
    worker = vllm_pod([])
    return o.CustomResource(
        "llm",
        api_version="ray.io/v1",
        kind="RayService",
        metadata={"name": "llm", "namespace": "serving"},
        spec={
            "serveConfigV2": "applications: []",
            "rayClusterConfig": {
                "headGroupSpec": {
                    "rayStartParams": {},
                    "template": {"metadata": {"labels": {"app": "llm"}}, "spec": head},
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "tpu-group",
                        "replicas": 1,
                        "numOfHosts": 2,
                        "rayStartParams": {},
                        "template": {"spec": worker},
                    }
                ],
            },
        },
    )


def test_pools_over_kuberay_and_leaderworkerset_pods_read_the_labels_their_controllers_add():
    head = {"ray.io/node-type": "head", "app": "llm"}
    assert problems(lambda: (rayservice(), picker_service(), pool(labels=head))) == []
    (message,) = problems(lambda: (rayservice(), picker_service(), pool(labels={"ray.io/node-type": "gateway"})))
    assert "matches no serving pod" in message and "RayService serving/llm (" in message
    leader = {"leaderworkerset.sigs.k8s.io/name": "vllm-lws", "leaderworkerset.sigs.k8s.io/worker-index": "0"}

    def lws():
        group = {"size": 2, "workerTemplate": {"spec": vllm_pod([])}}
        o.CustomResource(
            "vllm-lws",
            api_version="leaderworkerset.x-k8s.io/v1",
            kind="LeaderWorkerSet",
            metadata={"name": "vllm-lws", "namespace": "serving"},
            spec={"replicas": 1, "leaderWorkerTemplate": group},
        )
        picker_service()

    assert problems(lambda: (lws(), pool(labels=leader))) == []
    wrong = {**leader, "leaderworkerset.sigs.k8s.io/name": "other"}
    assert "matches no serving pod" in problems(lambda: (lws(), pool(labels=wrong)))[0]


def test_values_unknown_at_preview_are_skipped_not_guessed():
    """A selector value or a target port only known after apply is not judged (raw wire form with unknowns)."""
    resources = capture(program(None, picker_service))
    unknown_pool = raw(
        "kubernetes:inference.networking.k8s.io/v1:InferencePool",
        "vllm-pool",
        {
            "apiVersion": INFERENCE_POOL_API_VERSION,
            "kind": "InferencePool",
            "metadata": {"name": "vllm-pool", "namespace": "serving"},
            "spec": {
                "selector": {"matchLabels": {"app": UNKNOWN_STRING}},
                "targetPorts": [{"number": 8000.0}],
                "endpointPickerRef": {"name": "vllm-epp", "port": {"number": 9002.0}},
            },
        },
    )
    assert of(run([*resources, unknown_pool]), POLICY) == []
    unknown_pool.props["spec"]["selector"]["matchLabels"] = {"app": "nope"}
    assert len(of(run([*resources, unknown_pool]), POLICY)) == 1


def test_ray_serve_listens_on_its_serve_port_without_one_declared():
    """Every RayService pod runs a Serve proxy on 8000 (KubeRay's default serving port) even when no container
    port says so and the image is not a catalogued engine."""

    def head_without_ports(port):
        def make():
            o.CustomResource(
                "llm",
                api_version="ray.io/v1",
                kind="RayService",
                metadata={"name": "llm", "namespace": "serving"},
                spec={
                    "rayClusterConfig": {
                        "headGroupSpec": {
                            "rayStartParams": {},
                            "template": {
                                "spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.49.1"}]}
                            },
                        }
                    }
                },
            )
            picker_service()
            pool(labels={"ray.io/node-type": "head"}, port=port)

        return make

    assert problems(head_without_ports(8000)) == []
    assert (
        "spec.targetPorts[0].number 8001 is not a port every matched server listens on (RayService serving/llm listens on 8000)"
        in (problems(head_without_ports(8001))[0])
    )


def test_a_helm_release_in_the_namespace_may_hold_the_servers_and_the_picker():
    """A Helm v3 Release's objects are not stack resources: absent pods or picker are then not refused."""

    def build(namespace):
        def make():
            k8s.helm.v3.Release("epp", chart="inferencepool", version="v1.5.0", namespace=namespace)
            pool(picker="vllm-epp-chart", labels={"app": "from-chart"})

        return make

    assert problems(build("serving")) == []
    assert len(problems(build("elsewhere"))) == 2  # the selector and the picker, both refused


def test_a_picker_reference_without_a_port_breaks_the_crds_rule_the_schema_check_cannot_run():
    """`port is required when kind is 'Service'` is a CEL rule (x-kubernetes-validations): the pack checks it."""

    def portless():
        o.CustomResource(
            "vllm-pool",
            api_version=INFERENCE_POOL_API_VERSION,
            kind="InferencePool",
            metadata={"name": "vllm-pool", "namespace": "serving"},
            spec={
                "selector": {"matchLabels": {"app": "vllm-tpu"}},
                "targetPorts": [{"number": 8000}],
                "endpointPickerRef": {"name": "vllm-epp"},
            },
        )

    assert problems(program(None, portless)) == [
        "InferencePool serving/vllm-pool: spec.endpointPickerRef.port is required when kind is Service (the CRD's "
        "validation rule); set port.number to Service vllm-epp's ext-proc port (9002 by default)"
    ]


# -- the precise prefix cache: a picker that indexes KV events needs servers that publish them --------------------

PRECISE_EVENTS = '{"enable_kv_cache_events":true,"publisher":"zmq","topic":"kv@vllm@meta-llama/Llama-3.1-8B"}'


def precise_picker(block: int = 256) -> Any:
    """A hand-written llm-d router picker (`app: vllm-epp`, the Service's selector) whose ConfigMap declares the
    precise prefix producer at `block` tokens."""

    def build():
        config = {
            "apiVersion": "llm-d.ai/v1alpha1",
            "kind": "EndpointPickerConfig",
            "plugins": [
                {
                    "type": "precise-prefix-cache-producer",
                    "parameters": {"tokenProcessorConfig": {"blockSizeTokens": block}},
                },
                {"type": "prefix-cache-scorer"},
            ],
        }
        k8s.core.v1.ConfigMap(
            "vllm-epp",
            metadata={"name": "vllm-epp", "namespace": "serving"},
            data={"config.yaml": yaml.safe_dump(config)},
        )
        o.deployment(
            "vllm-epp",
            {
                "containers": [{"name": "epp", "image": "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0"}],
                "volumes": [{"name": "config", "configMap": {"name": "vllm-epp"}}],
            },
        )
        pool()
        route()

    return build


def precise_server(*events: str, lengths: tuple[str, ...] = ("--max-model-len=4096", "--max-num-seqs=128")) -> dict:
    spec = vllm_pod(["--port=8000", *lengths])
    spec["containers"][0]["args"] += list(events)
    return spec


def test_a_precise_picker_with_servers_that_publish_under_their_model_at_their_block_size_passes():
    assert problems(program(precise_server("--kv-events-config", PRECISE_EVENTS), precise_picker())) == []


def test_a_precise_picker_in_front_of_servers_that_publish_nothing_is_refused():
    (message,) = problems(program(precise_server(), precise_picker()))
    assert "precise-prefix-cache-producer indexes KV-cache events, but Deployment serving/vllm-tpu" in message
    assert "publishes none" in message and "--kv-events-config" in message


def test_a_topic_under_another_model_or_without_the_prefix_is_refused():
    for topic in ("kv@vllm@llama", "vllm@meta-llama/Llama-3.1-8B", ""):
        events = PRECISE_EVENTS.replace("kv@vllm@meta-llama/Llama-3.1-8B", topic)
        (message,) = problems(program(precise_server(f"--kv-events-config={events}"), precise_picker()))
        assert f"under topic {topic!r}" in message and "kv@<pod>@meta-llama/Llama-3.1-8B" in message


def test_a_router_block_size_other_than_the_servers_is_refused():
    # max-model-len 4096 on tpu-inference: 256-token pages; the router's default would be 16
    (message,) = problems(program(precise_server("--kv-events-config", PRECISE_EVENTS), precise_picker(block=16)))
    assert message.endswith("caches 256-token blocks; set tokenProcessorConfig.blockSizeTokens: 256")
    given = precise_server("--kv-events-config", PRECISE_EVENTS, "--block-size=64")
    assert problems(program(given, precise_picker(block=64))) == []
    unsaid = precise_server("--kv-events-config", PRECISE_EVENTS, lengths=())
    assert problems(program(unsaid, precise_picker(block=16))) == []  # the model's defaults: not judged


def test_a_servers_flags_written_with_underscores_are_read_as_vllm_reads_them():
    """vLLM's parser takes `--kv_events_config` and `--block_size` for the dashed flags (ledger:
    vllm.args.underscores-as-dashes): a server that publishes is not refused as publishing none, and its block
    size is the one it runs with."""
    publishing = precise_server("--kv_events_config", PRECISE_EVENTS)
    assert problems(program(publishing, precise_picker())) == []
    given = precise_server("--kv_events_config", PRECISE_EVENTS, "--block_size=64")
    assert problems(program(given, precise_picker(block=64))) == []
