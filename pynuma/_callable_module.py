"""A package attribute that is both a function and a submodule stays callable.

``pynuma.discover`` and ``pynuma.features`` are functions of the public API
and also the names of the modules that define them.  Importing the module
(``import pynuma.discover.devices`` does so too) binds the module over the
lazy attribute; giving the module a ``__call__`` keeps ``pynuma.discover()``
working whichever happened first.
"""
import sys


def make_module_callable(module_name: str, function) -> None:
    """Calls of the module ``module_name`` call ``function``."""
    module = sys.modules[module_name]

    class CallableModule(type(module)):
        def __call__(self, *args, **kwargs):
            return function(*args, **kwargs)

    CallableModule.__name__ = f"CallableModule[{module_name}]"
    module.__class__ = CallableModule
