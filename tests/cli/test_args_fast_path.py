"""Every command's parser: where the argparse-free path answers, it answers exactly as argparse;
ordinary command lines take it; anything else goes to argparse (messages and exit codes unchanged)."""
from __future__ import annotations

import contextlib
import io
import os
import random

import pytest

from pynuma.cli import COMMANDS, _common
from pynuma.cli._args import _Bail
from pynuma._impl import import_module

SCALE = int(os.environ.get("PYNUMA_TEST_SCALE", "1"))
HELP_ARGV = {"hugepages": [["--help"], ["set", "--help"]]}


def _parsers(name):
    """The parsers command ``name`` builds, captured while it answers --help."""
    made = []
    real_parser = _common.parser

    def capture(command, description):
        p = real_parser(command, description)
        made.append(p)
        return p

    module = import_module(COMMANDS[name][0])
    holders = [m for m in (_common, module) if getattr(m, "parser", None) is real_parser]
    for argv in HELP_ARGV.get(name, [["--help"]]):
        for m in holders:
            m.parser = capture
        try:
            with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit):
                module.main(argv)
        finally:
            for m in holders:
                m.parser = real_parser
    return made


VALUES = ["0", "1", "7", "-1", "x", "", "0-3", "2Mi=4", "a=b", "1.5", "all", "--", "show", "check", "pod.yaml"]


def _value(rng, arg):
    choices = arg.kwargs.get("choices")
    if choices and rng.random() < 0.8:
        return rng.choice(list(choices))
    return rng.choice(VALUES)


def _argv(rng, p):
    """Options (right or wrong), then or among them positional words and sub-command names."""
    opts = [a for a in p._args if a.optional]
    npos = sum(1 for a in p._args if not a.optional)
    words = []
    for arg in opts:
        if arg.kwargs.get("required") and rng.random() < 0.9:
            words += [arg.names[0], _value(rng, arg)]
    for _ in range(rng.randint(0, 5)):
        roll = rng.random()
        if roll < 0.6 and opts:
            arg = rng.choice(opts)
            name = rng.choice(arg.names)
            if arg.kwargs.get("action") in ("store_true", "store_false"):
                words.append(name)
            elif name.startswith("--") and rng.random() < 0.3:
                words.append(f"{name}={_value(rng, arg)}")
            else:
                words += [name] + ([_value(rng, arg)] if rng.random() < 0.9 else [])
        elif roll < 0.7:
            words.append(rng.choice(["--bogus", "-h", "--js", "-Cx", "-"]))
        else:
            words.append(rng.choice(VALUES))
    for _ in range(rng.choice([npos, npos, npos + 1, max(npos - 1, 0), rng.randint(0, 3)])):
        words.insert(rng.randint(0, len(words)), rng.choice(VALUES[:11]))
    if p._sub is not None and rng.random() < 0.9:
        name = rng.choice(list(p._sub._parsers))
        words = [w for w in words if w not in p._sub._parsers]
        cut = rng.randint(0, len(words))
        words = words[:cut] + [name] + _argv(rng, p._sub._parsers[name])
    return words


def _argparse_answer(p, argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(p.real().parse_args(argv))
        except SystemExit as exit_:
            return ("exit", exit_.code, err.getvalue())


@pytest.mark.parametrize("name", sorted(n for n in COMMANDS if n != "topology"))
def test_fast_answers_equal_argparse(name):
    rng = random.Random(name)
    fast_answers = 0
    for p in _parsers(name):
        for _ in range(600 * SCALE):
            argv = _argv(rng, p)
            try:
                fast = p._fast(argv)
            except _Bail:
                continue
            fast_answers += 1
            assert fast == _argparse_answer(p, argv), argv
    assert fast_answers > 0


ORDINARY = [
    ("hugepages", []), ("hugepages", ["--json", "--root", "/"]), ("cgroups", ["--explain", "--json"]),
    ("show", ["1"]), ("show", ["--threads", "--json"]), ("eviction", ["--eviction-hard", "memory.available<1Gi"]),
    ("allocatable", ["--kube-reserved=cpu=1", "--max-pods", "50"]), ("qos", ["pod.yaml", "--json"]),
    ("state", ["show", "cpu_manager_state"]), ("run", ["--cpus", "0-1", "--membind", "0", "--", "true", "-x"]),
    ("run", ["-C", "0", "true"]), ("hints", ["merge", "--policy", "restricted", "--hints", "h.json"]),
]


@pytest.mark.parametrize("name,argv", ORDINARY, ids=[" ".join([n] + a) for n, a in ORDINARY])
def test_ordinary_command_lines_skip_argparse(name, argv):
    if name == "run" and "--" in argv and not _args_keep_dashdash():
        pytest.skip("this Python's argparse handles '--' its own way: argparse parses it")
    parsers = _parsers(name)
    answered = []
    for p in parsers:
        try:
            answered.append(p._fast(argv) == _argparse_answer(p, argv))
        except _Bail:
            pass
    assert answered and all(answered)


def _args_keep_dashdash():
    from pynuma.cli import _args

    return _args._DASHDASH_KEPT


def test_errors_and_help_still_come_from_argparse(capsys):
    p = _common.parser("demo", "A demo.")
    p.add_argument("--count", type=int)
    with pytest.raises(SystemExit) as exit_:
        p.parse_args(["--count", "many"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("pynuma demo: error: argument --count: invalid int value: 'many'") and err.count("\n") == 1
    with pytest.raises(SystemExit) as exit_:
        p.parse_args(["--help"])
    assert exit_.value.code == 0 and "--count COUNT" in capsys.readouterr().out


def test_json_text_is_json_dumps():
    import json

    values = [{"a": [1, 2.5, None, True, "é\n\"x\""], "b": {}, "c": [], 3: {"d": [[]]}, 1.5: float("inf"),
               None: False}, [], {}, "plain", -0.0, 10**30, [[1, [2, {"x": (3, 4)}]]]]
    for v in values:
        assert _common.json_text(v) == json.dumps(v, indent=2)
    with pytest.raises(TypeError):
        _common.json_text({"a": object()})
