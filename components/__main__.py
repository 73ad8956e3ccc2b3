"""Entry point of the tpu-stacks plugin package.

The Python language host imports this module and hosts every ComponentResource that is a
top-level name here; run directly (older hosts), it serves them explicitly.
"""

from pulumi.provider.experimental import component_provider_host

from tpu_stacks.plugin import PACKAGE, public_components

COMPONENTS = public_components()
globals().update({component.__name__: component for component in COMPONENTS})

if __name__ == "__main__":
    component_provider_host(COMPONENTS, name=PACKAGE)
