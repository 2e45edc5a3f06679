"""Command-line parsing without importing argparse when the command line is ordinary.

Importing ``argparse`` (with ``re``, ``gettext`` and ``locale``) costs a
read-only command about two thirds of its start-up budget.  A
:class:`Parser` records the ``argparse`` calls a command makes
(``add_argument``, groups, sub-commands) and parses the usual command
lines itself: known long or short options, ``--opt=value``, flags,
positionals, one level of sub-commands.  Anything else -- ``--help``, an
error, an abbreviation, a negative number, short options run together --
goes to a real ``argparse`` parser rebuilt from the same calls, so the
answer, the messages and the exit status are always argparse's.
"""
import sys

REMAINDER = "..."  # argparse.REMAINDER
# argparse up to 3.11 keeps a "--" that starts a REMAINDER (checked by the tests); later versions
# reworked "--" handling, so there such command lines go to argparse itself
_DASHDASH_KEPT = sys.version_info < (3, 12)
_STORE_ACTIONS = (None, "store", "append")
#: metavars of the arguments that name a file or directory: an empty value there names nothing
PATH_METAVARS = frozenset({"FILE", "DIR", "PATH", "FILE|DIR", "POD.yaml", "PODS.yaml"})


def empty_path(metavar, value, default) -> bool:
    """Whether ``value`` leaves a path argument empty (``--root ''``) when its default does not."""
    if metavar not in PATH_METAVARS or value == default:
        return False
    return value == "" or (isinstance(value, list) and "" in value)
_FLAG_ACTIONS = ("store_true", "store_false")


class Namespace:
    """The parsed values as attributes (argparse.Namespace's behaviour for the parts commands use)."""

    def __init__(self, **kwargs) -> None:
        self.__dict__.update(kwargs)

    def __eq__(self, other) -> bool:
        return vars(self) == vars(other) if hasattr(other, "__dict__") else NotImplemented

    def __contains__(self, key: str) -> bool:
        return key in self.__dict__

    def __repr__(self) -> str:
        return "Namespace(" + ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items()) + ")"


class _Bail(Exception):
    """This command line needs argparse itself."""


class _Arg:
    __slots__ = ("names", "kwargs", "dest", "group")

    def __init__(self, names, kwargs, group) -> None:
        self.names, self.kwargs, self.group = names, kwargs, group
        if "dest" in kwargs:
            self.dest = kwargs["dest"]
        elif names[0][:1] != "-":
            self.dest = names[0]
        else:
            long = [n for n in names if n.startswith("--")]
            self.dest = (long[0] if long else names[0]).lstrip("-").replace("-", "_")

    @property
    def optional(self) -> bool:
        return self.names[0][:1] == "-"


class _Container:
    """What parsers and groups share: recorded calls, replayed on a real argparse object."""

    def __init__(self, root: "Parser", mutex=None) -> None:
        self._root = root
        self._calls: list = []
        self._mutex = mutex

    def add_argument(self, *names, **kwargs) -> None:
        arg = _Arg(names, kwargs, self._mutex)
        self._calls.append(("arg", arg))
        self._root._args.append(arg)

    def add_argument_group(self, *args, **kwargs) -> "_Container":
        group = _Container(self._root, self._mutex)
        self._calls.append(("group", (args, kwargs, group)))
        return group

    def add_mutually_exclusive_group(self, required: bool = False) -> "_Container":
        group = _Container(self._root)
        group._mutex = group
        self._root._mutexes.append((group, required))
        self._calls.append(("mutex", (required, group)))
        return group

    def _replay(self, real) -> None:
        for kind, what in self._calls:
            if kind == "arg":
                real.add_argument(*what.names, **what.kwargs)
            elif kind == "group":
                args, kwargs, group = what
                group._replay(real.add_argument_group(*args, **kwargs))
            elif kind == "mutex":
                required, group = what
                group._replay(real.add_mutually_exclusive_group(required=required))
            else:  # "sub"
                what._replay(real)


class _Subparsers:
    """``add_subparsers()``: sub-command parsers by name."""

    def __init__(self, root: "Parser", kwargs: dict) -> None:
        self._root, self._kwargs = root, kwargs
        self.required = kwargs.get("required", False)
        self.dest = kwargs.get("dest")
        self._parsers: dict = {}
        self._order: list = []

    @property
    def choices(self) -> dict:
        """Sub-command name -> its parser (argparse's ``_SubParsersAction.choices``)."""
        return self._parsers

    def add_parser(self, name: str, **kwargs) -> "Parser":
        child = Parser(prog=f"{self._root.prog} {name}", real_class=self._root._real_class,
                       on_parse=self._root._on_parse)
        self._parsers[name] = child
        self._order.append((name, kwargs, child))
        return child

    def _replay(self, real) -> None:
        kwargs = dict(self._kwargs)
        kwargs.pop("required", None)
        sub = real.add_subparsers(**kwargs)
        sub.required = self.required
        for name, kw, child in self._order:
            child._real = sub.add_parser(name, **kw)
            child._replay(child._real)


class Parser(_Container):
    """An argparse-compatible parser front (see the module docstring)."""

    def __init__(self, prog=None, description=None, real_class=None, on_parse=None, **kwargs) -> None:
        """``real_class``: a function returning the argparse class to build when needed
        (default ``argparse.ArgumentParser``); ``on_parse(prog)``: called as each parser (a
        sub-command's inside its parent's) starts parsing; other keywords go to argparse."""
        super().__init__(self)
        self.prog = prog
        self._on_parse = on_parse
        self._kwargs = dict(kwargs, description=description)
        self._real_class = real_class
        self._args: list = []
        self._mutexes: list = []
        self._sub = None
        self._real = None

    def add_subparsers(self, **kwargs) -> _Subparsers:
        self._sub = _Subparsers(self, kwargs)
        self._calls.append(("sub", self._sub))
        return self._sub

    # -- argparse itself, when needed ---------------------------------------------------
    def real(self):
        """The equivalent ``argparse.ArgumentParser`` (built on first use)."""
        if self._real is None:
            if self._real_class is None:
                import argparse

                cls = argparse.ArgumentParser
            else:
                cls = self._real_class()
            self._real = cls(prog=self.prog, **self._kwargs)
            self._replay(self._real)
        return self._real

    def error(self, message: str):
        return self.real().error(message)

    def exit(self, status: int = 0, message=None):
        return self.real().exit(status, message)

    def print_help(self, file=None) -> None:
        self.real().print_help(file)

    def print_usage(self, file=None) -> None:
        self.real().print_usage(file)

    def format_help(self) -> str:
        return self.real().format_help()

    def format_usage(self) -> str:
        return self.real().format_usage()

    def parse_args(self, args=None, namespace=None):
        """argparse's answer for ``args``; computed here when the command line is ordinary."""
        argv = list(sys.argv[1:] if args is None else args)
        if namespace is None:
            try:
                return Namespace(**self._fast(argv))
            except _Bail:
                pass
        return self.real().parse_args(argv, namespace)

    # -- the ordinary command line --------------------------------------------------------
    def _fast(self, argv: list) -> dict:
        if self._on_parse is not None:
            self._on_parse(self.prog)
        values: dict = {}
        by_name: dict = {}
        positionals = []
        for arg in self._args:
            kw = arg.kwargs
            action = kw.get("action")
            if action not in _STORE_ACTIONS + _FLAG_ACTIONS:
                raise _Bail
            if arg.dest in values:  # argparse keeps the first default given for a dest
                pass
            elif action in _FLAG_ACTIONS:
                values[arg.dest] = kw.get("default", action == "store_false")
            else:
                values[arg.dest] = _converted(arg, kw.get("default"))
            if arg.optional:
                for name in arg.names:
                    by_name[name] = arg
            else:
                positionals.append(arg)
        sub = self._sub
        if sub is not None:
            if positionals:
                raise _Bail
            if sub.dest is not None:
                values[sub.dest] = None
        seen: set = set()
        words: list = []
        # argparse takes positionals in runs between options and versions differ on the odd cases:
        # here they must form one run, and a variable-length one may not follow an option
        run_state = 0  # 0: no positional word yet, 1: in the run, 2: an option ended the run
        option_first = False
        i = 0
        while i < len(argv):
            word = argv[i]
            i += 1
            if word[:1] == "-" and word != "-":
                if run_state == 1:
                    run_state = 2
                elif run_state == 0 and word != "--":
                    option_first = True
                if word == "--":
                    if _DASHDASH_KEPT and len(positionals) == 1 and positionals[0].kwargs.get("nargs") == REMAINDER:
                        words.append(REMAINDER)  # everything from here on, "--" included
                        words.extend(argv[i - 1:])
                        break
                    raise _Bail
                name, eq, value = word.partition("=") if word[:2] == "--" else (word, "", "")
                arg = by_name.get(name)
                if arg is None or arg in seen and arg.kwargs.get("action") != "append":
                    raise _Bail
                group = arg.group
                if group is not None and any(a.group is group and a is not arg for a in seen):
                    raise _Bail
                seen.add(arg)
                action = arg.kwargs.get("action")
                if action in _FLAG_ACTIONS:
                    if eq:
                        raise _Bail
                    values[arg.dest] = action == "store_true"
                    continue
                if arg.kwargs.get("nargs") is not None:
                    raise _Bail
                if not eq:
                    if i >= len(argv) or argv[i][:1] == "-":
                        raise _Bail
                    value, i = argv[i], i + 1
                elif value == "--":
                    raise _Bail
                value = _convert(arg, value)
                if action == "append":
                    values[arg.dest] = list(values[arg.dest] or []) + [value]
                else:
                    values[arg.dest] = value
            elif sub is not None:
                child = sub._parsers.get(word)
                if child is None:
                    raise _Bail
                if sub.dest is not None:
                    values[sub.dest] = word
                values.update(child._fast(argv[i:]))
                sub = None
                break
            elif positionals and positionals[-1].kwargs.get("nargs") == REMAINDER and \
                    len(words) >= len(positionals) - 1:
                words.append(REMAINDER)
                words.extend(argv[i - 1:])
                break
            else:
                if run_state == 2:
                    raise _Bail
                run_state = 1
                words.append(word)
        if words and option_first and any(p.kwargs.get("nargs") in ("?", "*") for p in positionals):
            raise _Bail
        if sub is not None and sub.required:
            raise _Bail
        _place(positionals, words, values)
        for arg in self._args:
            if arg.kwargs.get("required") and arg not in seen:
                raise _Bail
        for group, required in self._mutexes:
            if required and not any(a.group is group for a in seen):
                raise _Bail
        if any(empty_path(a.kwargs.get("metavar"), values.get(a.dest), a.kwargs.get("default")) for a in self._args):
            raise _Bail  # argparse says which (see pynuma.cli._common)
        return values


def _convert(arg: _Arg, value: str):
    kw = arg.kwargs
    kind = kw.get("type")
    if kind is not None:
        try:
            value = kind(value)
        except (TypeError, ValueError):
            raise _Bail from None
    choices = kw.get("choices")
    if choices is not None and value not in choices:
        raise _Bail
    return value


def _converted(arg: _Arg, default):
    """argparse converts a string default with the argument's type."""
    if isinstance(default, str) and arg.kwargs.get("type") is not None:
        return _convert(arg, default)
    return default


def _place(positionals: list, words: list, values: dict) -> None:
    """Give the positional words to the positional arguments, as argparse would for plain cases."""
    if REMAINDER in words:
        cut = words.index(REMAINDER)
        rest, words = words[cut + 1:], words[:cut]
        last, positionals = positionals[-1], positionals[:-1]
        values[last.dest] = rest
    if not positionals:
        if words:
            raise _Bail
        return
    fixed = [p for p in positionals if p.kwargs.get("nargs") is None]
    if len(fixed) == len(positionals):
        if len(words) != len(positionals):
            raise _Bail
        for arg, word in zip(positionals, words):
            values[arg.dest] = _convert(arg, word)
        return
    if len(positionals) != 1:
        raise _Bail
    arg = positionals[0]
    nargs = arg.kwargs.get("nargs")
    if nargs == REMAINDER and not words:
        values[arg.dest] = []
    elif nargs == "?":
        if len(words) > 1:
            raise _Bail
        if words:
            values[arg.dest] = _convert(arg, words[0])
    elif nargs == "+" and words:
        values[arg.dest] = [_convert(arg, w) for w in words]
    elif nargs == "*" and words:
        values[arg.dest] = [_convert(arg, w) for w in words]
    elif nargs == "*" and values[arg.dest] is None:
        values[arg.dest] = []
    elif isinstance(nargs, int) and len(words) == nargs:
        values[arg.dest] = [_convert(arg, w) for w in words]
    else:
        raise _Bail
