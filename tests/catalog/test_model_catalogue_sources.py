"""catalog/model_catalogue.py: the Saxml test model's shape against a second statement of it, and where a project's
own config.json is looked for.

LmCloudSpmd175B ([SAX] lm_cloud.py) is GPT-3 175B's shape: Brown et al., "Language Models are Few-Shot Learners"
(arXiv:2005.14165), Table 2.1, GPT-3 175B: n_layers 96, d_model 12,288, n_heads 96, d_head 128, and "the
feedforward layer [is] four times the size of the bottleneck layer, d_ff = 4 * d_model".
"""

import re

from tpu_stacks.catalog.model_catalogue import (
    CONFIG_DIR,
    SAXML_175B_TEST,
    SAXML_TEST_MODEL,
    from_file,
    project_config,
)

GPT3_175B = {"n_layers": 96, "d_model": 12288, "n_heads": 96, "d_head": 128}


def test_the_saxml_test_model_is_gpt3_175bs_shape():
    attention = SAXML_TEST_MODEL.attention
    assert attention.layers == GPT3_175B["n_layers"]
    assert SAXML_TEST_MODEL.d_model == GPT3_175B["d_model"] == GPT3_175B["n_heads"] * GPT3_175B["d_head"]
    assert attention.query_heads == attention.kv_heads == GPT3_175B["n_heads"]  # multi-head attention
    assert attention.head_dim == GPT3_175B["d_head"]
    assert SAXML_TEST_MODEL.d_ff == 4 * GPT3_175B["d_model"]


def test_the_test_models_mesh_is_the_32_its_name_says():
    """`LmCloudSpmd175B32Test`: the 175B model on a 32-device mesh (its ICI_MESH_SHAPE [1, 1, 32])."""
    assert SAXML_TEST_MODEL.mesh_devices == int(re.search(r"175B(\d+)Test$", SAXML_175B_TEST)[1])


def test_a_project_model_is_org_slash_name_and_never_leaves_models(tmp_path):
    """`models/<org>/<name>/config.json` (`tpu-stacks models fetch ORG/NAME` writes it): a bare name is no project
    model, and `..` cannot reach a config.json outside `models/`."""
    for folder in (tmp_path / "models" / "acme", tmp_path / "outside", tmp_path / "models" / "acme" / "m"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text("{}")
    assert project_config("acme", tmp_path) is None
    assert project_config("acme/../../outside", tmp_path) is None
    assert project_config("acme/m", tmp_path) == tmp_path / "models" / "acme" / "m" / "config.json"


def test_a_files_model_answers_to_its_hugging_face_id_only_when_it_is_one(tmp_path):
    config = tmp_path / "config.json"
    config.write_text((CONFIG_DIR / "Qwen/Qwen2.5-1.5B-Instruct/config.json").read_text())
    assert from_file("acme/m", config, "model").hf_ids == ("acme/m",)
    assert from_file("mine", config, "model").hf_ids == ()
