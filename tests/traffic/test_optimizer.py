"""The traffic sizer picks the cheapest slice and replicas: checked against a brute force over the catalogue,
for monotonicity in the traffic, and for the basis (measured, model) each figure stands on."""

import math

import pytest

from tpu_stacks.catalog.engine_traffic import TRAFFIC as ENGINE_RECORDS
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS, VLLM_TPU_V6E_8B
from tpu_stacks.catalog.tpu import GENERATIONS, all_slice_shapes, generation, slice_shape
from tpu_stacks.jetstream.engine import JETSTREAM
from tpu_stacks.traffic import MAX_REPLICA_CHIPS, TrafficTarget, evaluate_slice, size_for_traffic
from tpu_stacks.traffic.model import MAX_BATCH, Workload, fits, kv_capacity, operating_point
from tpu_stacks.traffic.optimizer import deployable

CASES = [
    ("meta-llama/Llama-3.1-8B", "vllm", TrafficTarget(output_tokens_per_second=3000, ntpot_ms=40)),
    ("meta-llama/Llama-3.1-70B", "vllm", TrafficTarget(output_tokens_per_second=5000, ntpot_ms=50, ttft_ms=400)),
    (
        "google/gemma-2-9b",
        "jetstream",
        TrafficTarget(output_tokens_per_second=800, input_tokens=512, output_tokens=512),
    ),
    ("meta-llama/Llama-3.1-405B", "vllm", TrafficTarget(output_tokens_per_second=1000, ntpot_ms=80)),
]


def brute_force_cheapest(model, engine, target):
    """Every (generation, slice, batch, replicas) the catalogue offers, priced from the catalogue's on-demand
    chip price; the cheapest that carries the target within its limits (None: no priced one does)."""
    workload = Workload(engine=engine, input_tokens=target.input_tokens, output_tokens=target.output_tokens)
    best = None
    for gen in GENERATIONS:
        if gen.price is None:
            continue
        for shape in all_slice_shapes(gen):
            if shape.chips > MAX_REPLICA_CHIPS or not fits(model, shape, workload)[0]:
                continue
            # what the stacks deploy, with a calibration (the sizer considers nothing else)
            if not deployable(shape, engine) or ENGINE_RECORDS[engine].calibration(gen.name)[0] is None:
                continue
            for batch in range(1, min(kv_capacity(model, shape, workload), MAX_BATCH) + 1):
                point = operating_point(model, shape, workload, batch)
                if target.ntpot_ms is not None and point.ntpot_ms > target.ntpot_ms:
                    continue
                if target.ttft_ms is not None and point.ttft_ms > target.ttft_ms:
                    continue
                replicas = math.ceil(target.output_tokens_per_second / point.output_tokens_per_second)
                price = gen.price.usd_per_chip_hour * shape.chips * replicas
                if best is None or price < best[0] - 1e-9:
                    best = (price, shape, batch, replicas)
    return best


@pytest.mark.parametrize(("model_name", "engine", "target"), CASES, ids=[c[0] for c in CASES])
def test_the_choice_is_as_cheap_as_a_brute_force_over_the_catalogue(model_name, engine, target):
    model = lookup_model(model_name)
    answer = size_for_traffic(model, target, engine=engine)
    best = brute_force_cheapest(model, engine, target)
    assert best is not None and answer.choice is not None
    assert answer.choice.price_per_hour == pytest.approx(best[0])
    assert answer.choice.meets and answer.choice.replicas * answer.choice.per_replica.output_tokens_per_second >= (
        target.output_tokens_per_second
    )
    if target.ntpot_ms is not None:
        assert answer.choice.per_replica.ntpot_ms <= target.ntpot_ms
    if target.ttft_ms is not None:
        assert answer.choice.per_replica.ttft_ms <= target.ttft_ms


def test_every_slice_considered_is_in_the_answer_once():
    answer = size_for_traffic(lookup_model("meta-llama/Llama-3.1-8B"), TrafficTarget(output_tokens_per_second=10))
    seen = [(c.generation, c.topology, c.machine_type) for c in answer.candidates]
    expected = [
        (s.generation, s.topology, s.machine_type)
        for g in GENERATIONS
        for s in all_slice_shapes(g)
        if s.chips <= MAX_REPLICA_CHIPS and not (s.multi_host and s.generation == "tpu7x")  # Ray Serve: no tpu7x
    ]
    assert sorted(seen) == sorted(expected) and len(set(seen)) == len(seen)


def test_tpu_restricts_the_candidates_to_one_generation():
    answer = size_for_traffic(
        lookup_model("meta-llama/Llama-3.1-8B"), TrafficTarget(output_tokens_per_second=10), generations=["trillium"]
    )
    assert {c.generation for c in answer.candidates} == {"v6e"}


TRAFFIC = [50, 200, 1000, 3000, 8000, 20000, 60000, 150000]


@pytest.mark.parametrize("model_name", ["meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B"])
def test_more_traffic_never_costs_less(model_name):
    model = lookup_model(model_name)
    prices = []
    for traffic in TRAFFIC:
        choice = size_for_traffic(model, TrafficTarget(output_tokens_per_second=traffic, ntpot_ms=60)).choice
        assert choice is not None
        prices.append(choice.price_per_hour)
    assert prices == sorted(prices) and prices[0] < prices[-1]


@pytest.mark.parametrize(("gen", "topology"), [("v6e", "2x4"), ("v5e", "4x4"), ("v5p", "2x2x2")])
def test_within_one_topology_more_traffic_never_needs_fewer_replicas(gen, topology):
    model = lookup_model("meta-llama/Llama-3.1-70B")
    shape = slice_shape(gen, topology)
    replicas = [
        evaluate_slice(model, shape, TrafficTarget(output_tokens_per_second=t, ntpot_ms=80)).replicas for t in TRAFFIC
    ]
    assert all(r is not None for r in replicas)
    assert replicas == sorted(replicas) and replicas[0] < replicas[-1]


def test_a_tighter_latency_limit_never_costs_less():
    model = lookup_model("meta-llama/Llama-3.1-70B")
    prices = [
        size_for_traffic(model, TrafficTarget(output_tokens_per_second=4000, ntpot_ms=limit)).choice.price_per_hour
        for limit in (200, 80, 50, 35, 25, 15)
    ]
    assert prices == sorted(prices) and prices[0] < prices[-1]


def pinned(row):
    """A shipped row as if it had measured the build the stacks pin (no shipped row does)."""
    versions = {"vllm": VLLM.version, "jetstream": JETSTREAM[0].version}
    return row.model_copy(update={"engine_version": versions[row.engine]})


VLLM_ROW = next(row for row in MEASUREMENTS if row.engine == "vllm")
JETSTREAM_LLAMA_BF16 = next(
    row
    for row in MEASUREMENTS
    if row.engine == "jetstream" and row.model == "llama-3-8b" and row.weight_dtype == "bf16"
)
JETSTREAM_LLAMA_INT8_JULY = next(row for row in MEASUREMENTS if row.output_tokens_per_second == 8471.54)
JETSTREAM_LLAMA_8B = lookup_model("meta-llama/Meta-Llama-3-8B")
V5E_8 = slice_shape("v5e", "2x4", "ct5lp-hightpu-8t")


def test_a_row_of_another_engine_build_is_no_evidence_for_the_pinned_engine():
    """The vLLM row ran vLLM's PyTorch/XLA backend; the pinned vLLM runs on tpu-inference. The JetStream rows ran
    dated JetStream-PyTorch builds, not the pinned images. Both stay calibration, not `measured`."""
    assert all(row.engine_version is None for row in MEASUREMENTS)
    model = lookup_model("meta-llama/Llama-3.1-8B-Instruct")
    vllm = evaluate_slice(model, slice_shape("v6e", "1x1"), TrafficTarget(output_tokens_per_second=1800))
    assert vllm.basis == "model" and VLLM_TPU_V6E_8B not in vllm.source and vllm.measured_figures == ()
    target = TrafficTarget(output_tokens_per_second=20000, input_tokens=128, output_tokens=256)
    jetstream = evaluate_slice(JETSTREAM_LLAMA_8B, V5E_8, target, engine="jetstream")
    assert jetstream.basis == "model" and jetstream.per_replica.output_tokens_per_second != 8249


def test_a_published_measurement_of_the_pinned_build_is_the_basis_where_it_matches():
    model = lookup_model("meta-llama/Llama-3.1-8B-Instruct")
    shape = slice_shape("v6e", "1x1")
    rows = (pinned(VLLM_ROW),)
    measured = evaluate_slice(model, shape, TrafficTarget(output_tokens_per_second=1800), measurements=rows)
    assert measured.basis == "measured" and VLLM_TPU_V6E_8B in measured.source
    assert measured.per_replica.output_tokens_per_second == 945.80 and measured.replicas == 2
    assert measured.measured_figures == ("output_tokens_per_second",)  # its batch and latencies are modelled
    assert f"batch {measured.per_replica.batch} (modelled)" in measured.source and measured.per_replica.batch > 1
    # Outside the row's request shape, another dtype or another engine: the model speaks instead.
    long_prompts = TrafficTarget(output_tokens_per_second=1800, input_tokens=8000)
    assert evaluate_slice(model, shape, long_prompts, measurements=rows).basis == "model"
    target = TrafficTarget(output_tokens_per_second=1800)
    assert evaluate_slice(model, shape, target, weight_dtype="int8", measurements=rows).basis == "model"
    assert evaluate_slice(model, shape, target, engine="jetstream", measurements=rows).basis == "model"


def test_a_jetstream_measurement_of_the_pinned_build_matches_the_jetstream_engine():
    candidate = evaluate_slice(
        JETSTREAM_LLAMA_8B,
        V5E_8,
        TrafficTarget(output_tokens_per_second=20000, input_tokens=128, output_tokens=256),
        engine="jetstream",
        measurements=(pinned(JETSTREAM_LLAMA_BF16),),
    )
    assert candidate.basis == "measured" and candidate.per_replica.output_tokens_per_second == 8249
    assert candidate.replicas == 3 and candidate.per_replica.batch == 128
    assert candidate.measured_figures == ("output_tokens_per_second", "batch")


def _int8(ntpot_ms, rate=30000):
    """The reviewer's case: Llama 3 8B on JetStream, int8, v5e 2x4, 128 in / 256 out, on the July int8 row."""
    return evaluate_slice(
        JETSTREAM_LLAMA_8B,
        V5E_8,
        TrafficTarget(output_tokens_per_second=rate, ntpot_ms=ntpot_ms, input_tokens=128, output_tokens=256),
        engine="jetstream",
        weight_dtype="int8",
        kv_dtype="int8",
        measurements=(pinned(JETSTREAM_LLAMA_INT8_JULY),),
    )


def test_a_measured_rate_comes_with_latencies_that_agree_with_it():
    """256 sequences sharing 8471.5 tokens/s take ~30.2 ms a token each: the unscaled model's 20.7 ms contradicted it."""
    loose = _int8(ntpot_ms=60)
    per = loose.per_replica
    assert loose.basis == "measured" and per.output_tokens_per_second == 8471.54 and per.batch == 256
    per_token_ms = per.batch / per.output_tokens_per_second * 1000
    outputs = 256
    # NTPOT = (TTFT + (O - 1) x ITL) / O with ITL = batch / rate: at least (O - 1) / O of batch / rate.
    assert per.ntpot_ms >= per_token_ms * (outputs - 1) / outputs
    assert per.ntpot_ms == pytest.approx(per_token_ms, rel=0.02)
    # At 25 ms the measured load misses the limit: a smaller batch of the model scaled to the row, not "measured".
    tight = _int8(ntpot_ms=25)
    assert tight.basis == "model" and "scaled by" in tight.source
    # never more than measured; the JetStream v5e fit is compute-bound in decode at this batch, so the smaller
    # batch serves the same rate at a lower NTPOT
    assert tight.per_replica.ntpot_ms <= 25 and tight.per_replica.output_tokens_per_second <= 8471.54
    assert tight.per_replica.batch < 256


@pytest.mark.parametrize("rate", [8000, 30000])
def test_a_tighter_latency_limit_never_needs_fewer_replicas_across_the_measured_boundary(rate):
    """At 30000 tokens/s the unscaled model gave 3 replicas at NTPOT 20.5 ms, the measurement 4 at 21 ms."""
    limits = [18 + step / 2 for step in range(0, 60)]  # 18 ms to 47.5 ms
    answers = [_int8(limit, rate) for limit in limits]
    assert {a.basis for a in answers} == {"measured", "model"}  # the sweep crosses the boundary
    for tighter, looser in zip(answers, answers[1:]):
        assert tighter.replicas >= looser.replicas
        assert tighter.per_replica.output_tokens_per_second <= looser.per_replica.output_tokens_per_second
    assert all(a.per_replica.output_tokens_per_second <= 8471.54 for a in answers)


def test_a_measurement_whose_load_misses_the_latency_limit_is_not_used():
    model = lookup_model("meta-llama/Llama-3.1-8B")
    strict = evaluate_slice(model, slice_shape("v6e", "1x1"), TrafficTarget(output_tokens_per_second=900, ntpot_ms=30))
    assert strict.basis == "model" and strict.per_replica.ntpot_ms <= 30 and strict.measured_figures == ()


def test_candidates_that_fail_say_why():
    model = lookup_model("meta-llama/Llama-3.1-70B")
    too_small = evaluate_slice(model, slice_shape("v5e", "1x1"), TrafficTarget(output_tokens_per_second=100))
    assert not too_small.meets and too_small.replicas is None and too_small.price_per_hour is None
    assert too_small.why.startswith("does not fit") and too_small.binding_limit == "kv-capacity"
    too_fast = evaluate_slice(model, slice_shape("v6e", "2x4"), TrafficTarget(output_tokens_per_second=100, ntpot_ms=1))
    assert not too_fast.meets and "even at batch 1" in too_fast.why and too_fast.binding_limit == "ntpot-target"
    answer = size_for_traffic(model, TrafficTarget(output_tokens_per_second=100, ttft_ms=0.5))
    assert answer.choice is None and all(not c.meets and c.why for c in answer.candidates)


def test_the_json_shape_keeps_the_issue_names():
    answer = size_for_traffic(lookup_model("meta-llama/Llama-3.1-8B"), TrafficTarget(output_tokens_per_second=100))
    document = answer.as_dict()
    assert set(document) == {"model", "target", "choice", "candidates"}
    assert set(document["target"]) == {
        "output_tokens_per_second",
        "ntpot_ms",
        "ttft_ms",
        "input_tokens",
        "output_tokens",
        "pricing",
    }
    required = {
        "generation",
        "topology",
        "machine_type",
        "chips_per_replica",
        "hosts",
        "chips_per_host",
        "tensor_parallel",
        "pipeline_parallel",
        "replicas",
        "meets",
        "why",
        "per_replica",
        "basis",
        "source",
        "price_per_hour",
        "cost_per_million_output_tokens",
        "cost_per_million_input_tokens",
    }
    for candidate in [document["choice"], *document["candidates"]]:
        assert required <= set(candidate)
        assert set(candidate["per_replica"]) == {
            "output_tokens_per_second",
            "input_tokens_per_second",
            "ntpot_ms",
            "ttft_ms",
            "ttft_p99_ms",
            "batch",
        }
        assert candidate["basis"] in {"measured", "profile", "model"}


def test_multi_host_candidates_carry_the_sizing_parallelism():
    candidate = evaluate_slice(
        lookup_model("meta-llama/Llama-3.1-405B"),
        slice_shape("v5p", "2x4x4"),
        TrafficTarget(output_tokens_per_second=50),
    )
    assert (candidate.hosts, candidate.chips_per_host, candidate.tensor_parallel) == (8, 4, 32)
    assert generation(candidate.generation).name == "v5p"


def test_only_slices_the_engines_stack_deploys_are_candidates():
    """JetStream's pinned images serve v5e hosts only (jetstream/plan.py refuses the rest); vLLM spans hosts only
    where Ray Serve LLM takes the generation (no tpu7x): `size` never recommends what `plan` would refuse."""
    from tpu_stacks.errors import UserError
    from tpu_stacks.traffic.optimizer import candidate_shapes

    jetstream = candidate_shapes(engine="jetstream")
    assert jetstream and {s.generation for s in jetstream} == {"v5e"} and not any(s.multi_host for s in jetstream)
    vllm = candidate_shapes()
    assert any(s.multi_host and s.generation == "v6e" for s in vllm)
    assert not any(s.multi_host and s.generation == "tpu7x" for s in vllm)
    assert any(s.generation == "tpu7x" and not s.multi_host for s in vllm)  # one tpu7x host still serves
    with pytest.raises(UserError, match=r"^--tpu: 'v6e' has no slice the jetstream stack deploys; use one of v5e$"):
        candidate_shapes(["v6e"], engine="jetstream")


def test_when_exactly_one_slice_meets_the_target_it_is_the_choice():
    """An NTPOT limit between what the largest v6e slice whose devices divide Llama 3.1 70B's 64 heads (8x8, 64
    chips; 8x16 and 16x16 do not divide them, and are no candidates) and the next (4x8) reach at batch 1: only 8x8
    keeps it, and the one candidate that meets is chosen, not "no slice meets"."""
    model, workload = (
        lookup_model("meta-llama/Llama-3.1-70B"),
        Workload(engine="vllm", input_tokens=1800, output_tokens=128),
    )
    pod = operating_point(model, slice_shape("v6e", "8x8"), workload, 1).ntpot_ms
    next_largest = operating_point(model, slice_shape("v6e", "4x8"), workload, 1).ntpot_ms
    assert pod < next_largest
    limit = (pod + next_largest) / 2
    answer = size_for_traffic(model, TrafficTarget(output_tokens_per_second=100, ntpot_ms=limit), generations=["v6e"])
    meeting = [c for c in answer.candidates if c.meets]
    assert [(c.topology, c.chips_per_replica) for c in meeting] == [("8x8", 64)]
    too_many = [c for c in answer.candidates if c.chips_per_replica > 64]
    assert too_many and all(not c.meets and "does not divide" in c.why for c in too_many)
    assert len(answer.candidates) > 1 and answer.choice == meeting[0]
    assert answer.choice.per_replica.ntpot_ms <= limit and answer.choice.replicas >= 1
