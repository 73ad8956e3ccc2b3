"""The one reader of a RayService's Serve config: what the planner validates and the pack sizes."""

from __future__ import annotations

import pytest

from tpu_stacks.serving.serve_config import (
    LlmApp,
    ServeConfigError,
    cli_text,
    engine_flags,
    is_openai_app,
    llm_apps,
    parse,
)

CONFIG = """
applications:
  - name: llm
    import_path: ray.serve.llm:build_openai_app
    args:
      llm_configs:
        - model_loading_config:
            model_id: llama-405b
            model_source: gs://weights/meta-llama/Llama-3.1-405B-Instruct
          accelerator_type: TPU-V6E
          accelerator_config: {kind: tpu, topology: 4x8}
          engine_kwargs: {tensor_parallel_size: 32, max_model_len: 8192.0, enable_prefix_caching: true}
        - /home/ray/other.yaml
  - name: own
    import_path: my_app:build
    args: {model: x, flags: ["--tensor-parallel-size=8", "-pp", "2"]}
"""


def test_llm_configs_are_listed_where_they_are_with_their_slice():
    (app,) = llm_apps(parse(CONFIG))
    assert app.where == "applications[0].args.llm_configs[0]"
    assert (app.accelerator_type, app.topology) == ("TPU-V6E", "4x8")
    assert app.engine_kwargs["tensor_parallel_size"] == 32


def test_the_model_is_looked_up_by_source_then_id_then_the_paths_last_two_parts():
    (app,) = llm_apps(parse(CONFIG))
    key = "applications[0].args.llm_configs[0].model_loading_config"
    assert app.model_names() == [
        (f"{key}.model_source", "gs://weights/meta-llama/Llama-3.1-405B-Instruct"),
        (f"{key}.model_id", "llama-405b"),
        (f"{key}.model_source", "meta-llama/Llama-3.1-405B-Instruct"),
    ]


def test_a_gpu_accelerator_config_names_no_tpu_topology():
    (app,) = llm_apps(parse(CONFIG.replace("{kind: tpu, topology: 4x8}", "{kind: gpu}")))
    assert app.topology is None


def test_engine_kwargs_are_spelled_as_vllm_flags():
    flags = engine_flags({"tensor_parallel_size": 32, "max_model_len": 8192.0, "enforce_eager": True, "x": None})
    assert flags == {"--tensor-parallel-size": "32", "--max-model-len": "8192", "--enforce-eager": "true"}


def test_command_line_style_arguments_of_an_application_are_collected():
    assert cli_text(parse(CONFIG)) == [("applications[1].args", "--tensor-parallel-size=8 -pp 2")]


def test_the_openai_builder_in_either_spelling_serve_accepts():
    assert is_openai_app("ray.serve.llm:build_openai_app") and is_openai_app("ray.serve.llm.build_openai_app")
    assert not is_openai_app("my_app:build") and not is_openai_app(None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("applications: [\n", "is not YAML: expected the node content, but found '<stream end>' at line 2, column 1"),
        ("just text", "is a YAML str, not a mapping with `applications`"),
    ],
)
def test_a_config_that_is_not_a_yaml_mapping_is_one_line(text: str, message: str):
    with pytest.raises(ServeConfigError) as raised:
        parse(text)
    assert str(raised.value) == message


def test_a_character_yaml_refuses_is_named_on_one_line():
    with pytest.raises(ServeConfigError) as raised:
        parse("applications: \x07")
    assert str(raised.value) == "is not YAML: unacceptable character #x0007: special characters are not allowed"


def _app(**config) -> LlmApp:
    return LlmApp("applications[0].args.llm_configs[0]", config)


def test_empty_or_non_text_values_name_nothing():
    assert _app(accelerator_type="").accelerator_type is None
    assert _app(accelerator_config={"kind": "tpu", "topology": ""}).topology is None
    assert _app(accelerator_config={"topology": 4}).topology is None
    assert _app(accelerator_config={"topology": "2x2x2"}).topology == "2x2x2"  # kind defaults to a TPU here
    assert _app(model_loading_config={"model_id": "", "model_source": ""}).model_names() == []
    assert _app(model_loading_config={"model_id": 5}).model_names() == []


@pytest.mark.parametrize(
    ("source", "tail"),
    [
        ("meta-llama/Llama-3.1-8B", None),  # a Hugging Face id, not a path: no second guess
        ("/data", None),  # one part: nothing to read as org/name
        ("/meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
        ("gs://bucket/models/meta-llama/Llama-3.1-8B/", "meta-llama/Llama-3.1-8B"),
    ],
)
def test_a_paths_last_two_parts_are_tried_only_for_a_path(source: str, tail: str | None):
    names = [name for _, name in _app(model_loading_config={"model_source": source}).model_names()]
    assert names == [source] + ([tail] if tail else [])
