"""What a multi-host vLLM stack is watched by: Ray Serve's metrics and vLLM's own, exported through Ray.

In multi-host mode no pod serves vLLM's `/metrics` on the API port: Ray Serve LLM runs the engine inside a Serve
replica and exports its metrics through Ray (`log_engine_metrics`, on by default from Ray 2.51), on every Ray
node's metrics port beside Serve's own (catalog/engines/ray.py RAY_SERVE). So the charts read
- Serve's proxy: requests per second, the error ratio, end-to-end latency (`application` = the Serve app; the
  proxy's own health checks carry `application=""`, Ray's Serve dashboard excludes them the same way);
- Serve's replicas of the engine deployment (`LLMServer:<model id>`, Ray Serve LLM's deployment name: its
  builder prefixes the class name, python/ray/llm/_internal/serve/core/server/builder.py): healthy replicas,
  the autoscaler's target, requests in flight per replica and queued at the router;
- the engine: KV cache usage, requests waiting and running, TTFT and TPOT, tokens per second;
- the slice hosts: Ray TPU worker pods ready against the hosts the replicas need.
Every name goes through `queries.engine` against RAY_SERVE, so a name Ray does not export fails the build.
Where Ray and vLLM define them: ledger: ray.serve.metric.num-http-requests, ray.serve.metric.num-http-error-requests,
ray.serve.metric.http-request-latency-ms, ray.serve.metric.replica-healthy,
ray.serve.metric.autoscaling-target-replicas, ray.serve.metric.replica-processing-queries,
vllm.metric.kv-cache-usage-perc, vllm.metric.request-time-per-output-token-seconds,
vllm.metric.time-to-first-token-seconds, vllm.metric.prompt-tokens, vllm.metric.generation-tokens.
"""

from __future__ import annotations

from tpu_stacks.catalog.engines.ray import through_ray
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.gcp.monitoring import queries as q
from tpu_stacks.gcp.monitoring.alert import Alert
from tpu_stacks.gcp.monitoring.model import Section, Threshold, Widget
from tpu_stacks.gcp.monitoring.targets import Serve, Target
from tpu_stacks.gcp.monitoring.widgets import chart, scorecard

ENGINE_DEPLOYMENT = "LLMServer:.*"
"""The Serve deployment that holds the engine (one replica = one slice); the app's ingress is another deployment."""
ERROR_RATIO = 0.05
"""The share of 5xx answers over ten minutes above which `serve-errors` fires."""
PERCENTILES = (0.5, 0.9, 0.99)

# The per-request TPOT histogram (the name Ray 2.60.0's Serve LLM dashboard charts) and the KV cache gauge, as the
# pinned vLLM exports them (catalog/engines/vllm.py VLLM; a renamed name is refused there, VLLM.renamed).
KV_CACHE_USAGE = "vllm:kv_cache_usage_perc"
TIME_PER_OUTPUT_TOKEN = "vllm:request_time_per_output_token_seconds"


def engine_metric(name: str) -> str:
    """The Ray-exported name of a metric the pinned vLLM exports (KeyError when it does not: a catalogue fault)."""
    metric = VLLM.metric(name)
    if metric is None:
        raise KeyError(f"vllm {VLLM.version} does not export {name}")
    return through_ray(metric).name


def _serve(t: Target) -> Serve:
    if t.serve is None:
        raise ValueError(f"the {t.kind} target of {t.title} names no Serve application")
    return t.serve


def _app(t: Target, **extra: str) -> str:
    return t.scope.prometheus(application=_serve(t).application, **extra)


def _replicas(t: Target, **extra: str) -> str:
    return t.scope.prometheus(**{"deployment~": ENGINE_DEPLOYMENT, **extra})


def _m(t: Target, name: str, selector: str, suffix: str = "") -> str:
    return q.engine(t.engine, name, selector, suffix)


def requests_per_second(t: Target) -> str:
    return q.rate(_m(t, "ray_serve_num_http_requests_total", _app(t)))


def error_ratio(t: Target) -> str:
    """5xx answers over all answers of the app (Ray's Serve alerting example: errors per route over requests)."""
    errors = q.rate(_m(t, "ray_serve_num_http_error_requests_total", _app(t, **{"error_code~": "5.."})))
    return f"({errors} or on() vector(0)) / {requests_per_second(t)}"


def healthy_replicas(t: Target) -> str:
    """Healthy engine replicas: Serve's gauge is 1 per healthy replica, or the count per deployment when its
    high-cardinality tags are off (deployment_state.py); the sum is the count either way."""
    return f"sum({_m(t, 'ray_serve_deployment_replica_healthy', _replicas(t))})"


def sections(t: Target) -> list[Section]:
    serve = _serve(t)
    replicas_sel = _replicas(t)
    in_flight = _m(t, "ray_serve_replica_processing_queries", replicas_sel)
    line = ()
    if serve.autoscales and serve.target_ongoing_requests is not None:
        line = (
            Threshold(
                value=serve.target_ongoing_requests,
                label=f"autoscaling target {serve.target_ongoing_requests:g} per replica",
                color="YELLOW",
            ),
        )
    requests = (
        chart(
            "Requests per second (Serve proxy)",
            (q.rate(_m(t, "ray_serve_num_http_requests_total", _app(t)), "status_code"), "${status_code}"),
            unit="requests/s",
        ),
        chart(
            "Error ratio (5xx over all answers)",
            (error_ratio(t), "5xx"),
            thresholds=(Threshold(value=ERROR_RATIO, label="serve-errors alert"),),
            unit="fraction",
        ),
        chart(
            "Request latency, end to end (Serve proxy)",
            *(
                (q.quantile(t.engine, "ray_serve_http_request_latency_ms", _app(t), p), f"p{int(p * 100)}")
                for p in PERCENTILES
            ),
            unit="ms",
        ),
        chart(
            "Requests in flight per replica, and queued",
            (f"avg({in_flight})", "in flight, average per replica"),
            (f"sum({_m(t, 'ray_serve_deployment_queued_queries', replicas_sel)})", "queued at the router"),
            thresholds=line,
            unit="requests",
        ),
        _replica_chart(t),
    )
    engine = _engine_charts(t)
    return [
        Section(title="Serving (Ray Serve)", subtitle=t.title, widgets=requests),
        Section(title="Engine (vLLM through Ray)", widgets=engine),
    ]


def _replica_chart(t: Target) -> Widget:
    serve = _serve(t)
    target = _m(t, "ray_serve_autoscaling_target_replicas", _replicas(t))
    return chart(
        f"Serve replicas, one slice each ({serve.min_replicas}..{serve.max_replicas})",
        (healthy_replicas(t), "healthy"),
        (f"max({target})", "autoscaler target"),
        thresholds=(
            Threshold(value=serve.max_replicas, label="max replicas", color="RED"),
            Threshold(value=serve.min_replicas, label="min replicas", color="YELLOW", direction="BELOW"),
        ),
        unit="replicas",
    )


def _engine_charts(t: Target) -> tuple[Widget, ...]:
    sel = t.scope.prometheus()
    workers = t.scope.prometheus(container=t.tpu_containers[0])
    wanted = _serve(t).min_replicas * t.hosts_per_slice
    ttft = engine_metric("vllm:time_to_first_token_seconds")
    tpot = engine_metric(TIME_PER_OUTPUT_TOKEN)
    return (
        chart(
            "KV cache usage",
            (f"max by (pod) ({_m(t, engine_metric(KV_CACHE_USAGE), sel)})", "${pod}"),
            unit="fraction",
        ),
        chart(
            "Requests waiting and running (engine)",
            (f"sum({_m(t, engine_metric('vllm:num_requests_waiting'), sel)})", "waiting"),
            (f"sum({_m(t, engine_metric('vllm:num_requests_running'), sel)})", "running"),
            unit="requests",
        ),
        chart(
            "Time to first token",
            *((q.quantile(t.engine, ttft, sel, p), f"p{int(p * 100)}") for p in PERCENTILES),
            unit="s",
        ),
        chart(
            "Time per output token",
            *((q.quantile(t.engine, tpot, sel, p), f"p{int(p * 100)}") for p in PERCENTILES),
            unit="s",
        ),
        chart(
            "Tokens per second",
            (q.rate(_m(t, engine_metric("vllm:generation_tokens_total"), sel)), "generated"),
            (q.rate(_m(t, engine_metric("vllm:prompt_tokens_total"), sel)), "prompt"),
            unit="tokens/s",
        ),
        chart(
            f"Ray TPU worker pods ready ({t.hosts_per_slice} hosts per slice)",
            (f"sum({q.kube_state('kube_pod_container_status_ready', workers)})", "ready"),
            thresholds=(Threshold(value=wanted, label="hosts of the minimum replicas", direction="BELOW"),),
            unit="pods",
        ),
    )


def status_cards(t: Target) -> list[Widget]:
    """The first row: healthy replicas (red below the minimum), requests per second, error ratio."""
    serve = _serve(t)
    return [
        scorecard(
            "Serve replicas healthy",
            healthy_replicas(t),
            (
                Threshold(
                    value=serve.min_replicas - 1,
                    label=f"fewer than {serve.min_replicas}",
                    color="RED",
                    direction="BELOW",
                ),
            ),
        ),
        scorecard("Requests per second", requests_per_second(t)),
        scorecard("Error ratio (5xx)", error_ratio(t), (Threshold(value=ERROR_RATIO, label="serve-errors alert"),)),
    ]


def alerts(t: Target) -> list[Alert]:
    """The multi-host mode's serving alerts; none for other targets."""
    if t.serve is None:
        return []
    serve = _serve(t)
    healthy = _m(t, "ray_serve_deployment_replica_healthy", _replicas(t))
    found = [
        Alert(
            id="serving-pods-not-ready",
            title=f"{t.title}: fewer than {serve.min_replicas} healthy Serve replicas",
            # absent(): before the first replica reports, the gauge has no series and a bare comparison is empty
            query=f"({serve.min_replicas} - sum({healthy}) > 0) or on() absent({healthy})",
            minutes=t.startup_minutes + 5,
            severity="ERROR",
            why=f"Fewer healthy engine replicas (each a whole {t.hosts_per_slice}-host slice) than the minimum for "
            f"longer than a replica may take to start ({t.startup_minutes} min: weights through GCS FUSE and the "
            "XLA compile on every host). Check pending Ray worker pods (TPU capacity for a whole slice), "
            "`kubectl describe rayservice`, and the Serve replica's log in the Ray dashboard.",
        ),
        Alert(
            id="serve-errors",
            title=f"{t.title}: more than {ERROR_RATIO:.0%} of answers are 5xx",
            query=f"{error_ratio(t)} > {ERROR_RATIO:g}",
            minutes=10,
            severity="ERROR",
            why="The Serve proxy answers 5xx: a replica failing requests (engine errors, out of memory) or none "
            "able to take them. Read the LLMServer replica's log and the Ray dashboard's Serve page.",
        ),
    ]
    if serve.autoscales and serve.target_ongoing_requests is not None:
        in_flight = _m(t, "ray_serve_replica_processing_queries", _replicas(t))
        target = _m(t, "ray_serve_autoscaling_target_replicas", _replicas(t))
        found.append(
            Alert(
                id="queue-above-target-at-max",
                title=f"Serve replicas above {serve.target_ongoing_requests:g} requests in flight at max replicas "
                f"({serve.max_replicas})",
                query=f"(avg({in_flight}) > {serve.target_ongoing_requests:g}) and on() "
                f"(max({target}) >= {serve.max_replicas})",
                minutes=t.monitoring.queue_minutes,
                severity="WARNING",
                why="Serve's autoscaler wants no more replicas than the maximum and requests keep piling up: raise "
                "replicas.max (a whole slice of TPU quota per replica), or shorten requests.",
            )
        )
    return found
