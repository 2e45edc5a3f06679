"""Build the native core: every ``pynuma/_native_*.pyx`` becomes an extension.

Each .pyx names the C sources it links with a ``# distutils: sources = ...``
header, so adding a native area never touches this file.  The build is
optional unless ``PYNUMA_REQUIRE_NATIVE=1``: without a compiler pynuma falls
back to its pure-Python twins (``pynuma.native_available()`` says which).
"""
import glob
import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

REQUIRE_NATIVE = os.environ.get("PYNUMA_REQUIRE_NATIVE") == "1"


class OptionalBuildExt(build_ext):
    """Build extensions, but let a failure fall back to pure Python."""

    def run(self):
        try:
            super().run()
        except Exception as err:  # compiler missing, Cython missing, ...
            self._give_up(err)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as err:
            self._give_up(err, ext.name)

    def _give_up(self, err, name="native core"):
        if REQUIRE_NATIVE:
            raise
        sys.stderr.write(f"pynuma: not building {name} ({err}); the pure-Python path will be used\n")


def native_extensions():
    if os.environ.get("PYNUMA_PURE_BUILD") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        if REQUIRE_NATIVE:
            raise
        return []
    sources = sorted(glob.glob(os.path.join("pynuma", "_native_*.pyx")))
    only = os.environ.get("PYNUMA_NATIVE_ONLY")  # "bitmap,fsread": build just these areas
    if only:
        wanted = {f"_native_{a.strip()}.pyx" for a in only.split(",")}
        sources = [s for s in sources if os.path.basename(s) in wanted]
    if not sources:
        if REQUIRE_NATIVE:
            raise RuntimeError("PYNUMA_REQUIRE_NATIVE=1 but no pynuma/_native_*.pyx source was found")
        return []
    return cythonize(
        sources,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False},
        quiet=True,
    )


setup(ext_modules=native_extensions(), cmdclass={"build_ext": OptionalBuildExt})
