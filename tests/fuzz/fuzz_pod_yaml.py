"""Fuzz target: pod manifests (YAML or JSON) and the YAML subset reader.

``_yamlsubset.load_all`` answers only where PyYAML answers the same: when it
returns documents, ``yaml.safe_load_all`` must accept the text and give equal
ones.  The file loaders (``load_yaml``, ``load_items``, ``load_pods``) fail
only with an ``InputError`` naming the file.
"""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main, outcome, pynuma_error, text, with_file  # noqa: E402

NAME = "pod_yaml"

def check(data: bytes) -> None:
    import yaml

    from pynuma._yamlsubset import load_all
    from pynuma.inputfile import load_items, load_yaml
    from pynuma.pod import load_pods

    s = text(data)
    fast = outcome(load_all, s, errors=())[1]
    if fast is not None:
        try:
            slow = list(yaml.safe_load_all(s))
        except (yaml.YAMLError, ValueError, RecursionError) as err:
            raise AssertionError(f"subset read {s!r:.200} that PyYAML refuses: {err}") from None
        assert fast == slow, (s, fast, slow)

    def load(path: str) -> None:
        for fn in (load_yaml, load_items, load_pods):
            out = outcome(fn, path, errors=pynuma_error())
            if out[0] == "error":
                assert path in out[2], (fn.__name__, out)  # names the file

    with_file(data, ".yaml", load)


if __name__ == "__main__":
    fuzz_main(check, NAME)
