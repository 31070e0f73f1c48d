"""What the runtime tests share about manifests."""

import json

from fa4 import runtime


def print_refusals(good, cases):
    """For each (label, change) of `cases`, loads a copy of manifest `good`
    with `change` applied and prints the runtime's ManifestError, or that it
    was accepted."""
    for label, change in cases:
        broken = json.loads(json.dumps(good))
        change(broken)
        try:
            runtime.Kernel(broken)
            print(f"{label}: accepted")
        except runtime.ManifestError as err:
            print(f"{label}: {err}")
