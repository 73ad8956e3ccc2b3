"""CustomResourceDefinitions the library itself declares, vendored unchanged from their upstream release
(`crds/PROVENANCE.tsv` beside this module: repository, tag, commit, path, sha256 prefix).

Why in the library and not only in the planner's schema folder: a stack declares these CRDs on the cluster (GKE
does not install them), so the file must ship with the component; the offline planner reads this folder too, so
an object of such a kind validates against the very schema the stack installs. Pure: no provider SDK.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CRD_DIR = Path(__file__).resolve().parent / "crds"
INFERENCE_OBJECTIVE_CRD = "inference.networking.x-k8s.io_inferenceobjectives.yaml"
"""InferenceObjective (`inference.networking.x-k8s.io/v1alpha2`) at gateway-api-inference-extension v1.5.0: alpha,
and GKE installs only the GA Inference Extension CRDs (docs/vllm.md, "Inference Gateway")."""


def crd_document(file: str) -> dict[str, Any]:
    """The CRD as upstream wrote it (one document per file)."""
    with (CRD_DIR / file).open(encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    if not isinstance(document, dict) or document.get("kind") != "CustomResourceDefinition":
        raise ValueError(f"{file} is not a CustomResourceDefinition")
    return document
