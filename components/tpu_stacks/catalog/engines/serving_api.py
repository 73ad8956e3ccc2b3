"""What a serving engine speaks over HTTP (`ServingApi`), apart from the gateway's tables
(catalog/inference_gateway.py) so that a workload folder's engine declaration (catalog/engines/declared.py) can name
the type without importing the tables that collect it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.engines.record import EngineName


class ServingApi(BaseModel):
    """What an engine's server speaks over HTTP, and the port it listens on unless told otherwise."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: EngineName
    openai: bool
    """Serves OpenAI's Completions and Chat APIs: the picker parses those bodies and routes them."""
    port_flag: str | None
    """The flag that sets its HTTP port (None: the image or a sidecar decides it)."""
    default_port: int | None
    """The port without `port_flag` (None: no HTTP server of its own)."""
    why: str
    source: str
    serves_models: bool
    """Answers requests for a model (a model server): its clients must be named (policies: serving-clients-named)."""
    front_ends: tuple[str, ...] = ()
    """Image repositories of HTTP servers that front the engine's models from pods of their own (Sax HTTP)."""
