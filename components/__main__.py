"""Entry point of the tpu-stacks plugin package.

The Python language host runs a plugin directory that has a `__main__.py` as `python <dir> <args>`
(pulumi-language-python's RunPlugin; `python -m pulumi.run.plugin` only without one), so this file
decides how the components are served: by `tpu_stacks.plugin.TpuStacksProvider`, with the package's
version, namespace and secrets in the schema. The components are top-level names here as well, so the
module shows what the package publishes (tests/test_plugin.py checks that none is left out).
"""

import sys

from tpu_stacks.plugin import public_components, serve

COMPONENTS = public_components()
globals().update({component.__name__: component for component in COMPONENTS})

if __name__ == "__main__":
    serve(sys.argv[1:])
