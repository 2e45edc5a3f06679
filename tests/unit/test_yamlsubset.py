"""pynuma._yamlsubset: wherever it answers, it answers exactly as yaml.safe_load_all; elsewhere it declines."""
from __future__ import annotations

import os
import random

import pytest
import yaml

from pynuma._yamlsubset import load_all

SCALE = int(os.environ.get("PYNUMA_TEST_SCALE", "1"))

WORDS = ["app", "web", "1Gi", "500m", "2", "0", "10", "012", "0x1f", "1e3", "1.5", "-1", "yes", "No", "on", "OFF",
         "null", "~", "true", "y", "n", "1_000", "2001-12-14", "12:30", "a b", "x.y/z", "Inf", ".inf", "NaN",
         "'q'", '"2"', "''", '"a,b"', "'it''s'", '"esc\\n"', "&a", "*a", "!!str x", "|", ">", "<<", "=", "@x",
         "key: v", "a#b", "hello world", "-x", "--fast", "+a", "-", "--", "-.5", "-1x", "+", "- x", "ON", "Yes", "0b1", "0b", "1G1", "12h", "v1"]
KEYS = ["name", "kind", "apiVersion", "on", "yes", "1", "a b", "app.kubernetes.io/name", '"q"', "x:y", "null",
        "010"]


def _value(rng, depth):
    roll = rng.random()
    if depth > 3 or roll < 0.45:
        return rng.choice(WORDS)
    if roll < 0.7:
        return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def _render(rng, v, indent, out, lead):
    """Write ``v`` as YAML lines; ``lead`` is what starts its first line ("key:" or "-")."""
    pad = " " * indent
    if isinstance(v, dict) and v and rng.random() < 0.25 and all(isinstance(x, str) for x in v.values()):
        out.append(pad + lead + " {" + ", ".join(f"{k}: {x}" for k, x in v.items()) + "}")
    elif isinstance(v, list) and v and rng.random() < 0.25 and all(isinstance(x, str) for x in v):
        out.append(pad + lead + " [" + ", ".join(v) + "]")
    elif isinstance(v, dict):
        if not v:
            out.append(pad + lead + " {}")
            return
        out.append(pad + lead)
        step = rng.choice([2, 2, 4, 1])
        for k, x in v.items():
            _render(rng, x, indent + step, out, f"{k}:")
    elif isinstance(v, list):
        if not v:
            out.append(pad + lead + " []")
            return
        out.append(pad + lead)
        step = 0 if lead.endswith(":") and rng.random() < 0.5 else rng.choice([2, 1])
        for x in v:
            _render(rng, x, indent + step, out, "-")
    else:
        out.append(pad + lead + " " + v)


def _document(rng):
    top = _value(rng, 0)
    out: list = []
    if isinstance(top, dict):
        for k, x in top.items():
            _render(rng, x, 0, out, f"{k}:")
    elif isinstance(top, list):
        for x in top:
            _render(rng, x, 0, out, "-")
    else:
        out.append(top)
    # inline "- key: value" items, as manifests write them
    text = "\n".join(out)
    text = text.replace("-\n  ", "- ") if rng.random() < 0.5 else text
    if rng.random() < 0.2:
        lines = text.split("\n")
        lines.insert(rng.randint(0, len(lines)), rng.choice(["# comment", "   # indented comment", ""]))
        text = "\n".join(lines)
    return text


def _text(rng):
    docs = [_document(rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    text = "\n---\n".join(docs)
    if rng.random() < 0.2:
        text = "---\n" + text
    if rng.random() < 0.3 and text:  # break it somewhere
        i = rng.randrange(len(text))
        text = text[:i] + rng.choice(["", " ", ":", "-", "\n", "'", "{", "  "]) + text[i + 1:]
    return text + rng.choice(["", "\n", "\n\n"])


def _pyyaml(text):
    try:
        return list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return "error"


def test_answers_equal_pyyaml_and_the_usual_shapes_are_answered():
    rng = random.Random(2024)
    answered = 0
    for _ in range(3000 * SCALE):
        text = _text(rng)
        got = load_all(text)
        if got is None:
            continue
        answered += 1
        assert got == _pyyaml(text), text
    assert answered > 600


MANIFEST = """\
# a pod
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests:
        cpu: 500m
        memory: 1Gi
      limits: {cpu: "2", memory: 1Gi}
  - name: side
    args: [run, --fast]
---
apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  containers: []
"""


def test_a_manifest_is_read_without_pyyaml():
    assert load_all(MANIFEST) == list(yaml.safe_load_all(MANIFEST))


@pytest.mark.parametrize("text", ["a: &x 1\nb: *x\n", "a: |\n  text\n", "a: b # c\n", "a: 012\n", "a: 1.5\n",
                                  "a:\tb\n", "a: 'it''s'\n", "a: !!str 1\n", "a: b: c\n", "- - a\n", "a: 2001-12-14\n",
                                  "a: [1, [2]]\n", "? a\n: b\n", "a: 1\n b: 2\n", "%YAML 1.1\n---\na: 1\n", "é: 1\n"])
def test_outside_the_subset_pyyaml_decides(text):
    assert load_all(text) is None
