"""Build the native core: every ``pynuma/_native_*.pyx`` becomes an extension.

Each .pyx names the C sources it links with a ``# distutils: sources = ...``
header, so adding a native area never touches this file.  The build is
optional unless ``PYNUMA_REQUIRE_NATIVE=1``: without a compiler pynuma falls
back to its pure-Python twins (``pynuma.native_available()`` says which).

What a build costs, and what this file does about it:

* Cython runs only when something is built (``build_ext``), never when pip
  merely asks for metadata or build requirements, and only for the modules
  whose generated C is older than their sources.
* The C compiler dominates (the generated modules are large): extensions
  are compiled in parallel, one job per CPU (``build_ext -j N`` or
  ``PYNUMA_BUILD_JOBS=N`` to choose).
* A build reuses an extension another build of this tree already compiled
  from the same sources with the same compiler settings (a regular install's
  ``build/lib.*`` for an in-place or editable build, and back), instead of
  compiling it again.
"""
import glob
import hashlib
import os
import shutil
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

REQUIRE_NATIVE = os.environ.get("PYNUMA_REQUIRE_NATIVE") == "1"
CYTHON_DIRECTIVES = {"language_level": "3", "boundscheck": False, "wraparound": False}
# what a compiled extension depends on besides its sources, and what decides how it is compiled
HEADERS = sorted(glob.glob(os.path.join("native", "*.h")))
COMPILER_ENV = ("CC", "CXX", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED", "ARCHFLAGS", "CCSHARED", "AR")


class OptionalBuildExt(build_ext):
    """Build extensions (Cython first, in parallel), but let a failure fall back to pure Python."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            jobs = os.environ.get("PYNUMA_BUILD_JOBS")
            self.parallel = int(jobs) if jobs else (os.cpu_count() or 1)

    def run(self):
        try:
            self._cythonize()
            super().run()
        except Exception as err:  # compiler missing, Cython missing, ...
            self._give_up(err)

    def _cythonize(self):
        """Generate the C of each .pyx and take the sources and flags its ``# distutils:`` header names.

        Cython's own dependency check would compare the generated C with the
        ``.pxd`` files of the Cython in pip's build environment, which pip
        installs afresh for every build: every build would run Cython again.
        The generated C is current when it is newer than this tree's Cython
        sources and ``setup.py`` (the directives) and was written by the same
        Cython version; only the others go through Cython.
        """
        pyx = [ext for ext in self.extensions if any(s.endswith(".pyx") for s in ext.sources)]
        if not pyx:
            return
        import Cython
        from Cython.Build import cythonize  # imported only when something is built

        stale = [ext for ext in pyx if self.force or not _generated_is_current(ext, Cython.__version__)]
        if stale:
            cythonize([_pyx_of(ext) for ext in stale], compiler_directives=CYTHON_DIRECTIVES, quiet=True,
                      force=True, nthreads=self.parallel if self.parallel > 1 else 0)
        for ext in pyx:
            source = _pyx_of(ext)
            header = _distutils_header(source)
            ext.sources = [source[:-4] + ".c"] + header.pop("sources", [])
            for key, values in header.items():
                setattr(ext, key, list(getattr(ext, key) or []) + values)

    def build_extension(self, ext):
        try:
            target = self.get_ext_fullpath(ext.name)
            stamp = self._settings_stamp(ext)
            if not self.force and self._reuse(ext, target, stamp):
                return
            before = _mtime(target)
            super().build_extension(ext)
            if _mtime(target) != before:  # compiled now (not skipped as up to date): say with what
                _write_stamp(target, stamp)
        except Exception as err:
            self._give_up(err, ext.name)

    def _settings_stamp(self, ext) -> str:
        """What decides the compiled result besides the sources: compiler, flags, macros, Python."""
        cfg = sysconfig.get_config_vars()
        parts = [sys.version, sys.platform, repr(sorted((k, os.environ.get(k)) for k in COMPILER_ENV)),
                 repr([cfg.get(k) for k in ("CC", "CFLAGS", "CCSHARED", "LDSHARED", "OPT", "BASECFLAGS")]),
                 repr((self.debug, self.define, self.undef, self.libraries, self.include_dirs)),
                 repr((ext.define_macros, ext.undef_macros, ext.extra_compile_args, ext.extra_link_args,
                       ext.include_dirs, ext.libraries, sorted(ext.sources)))]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def _reuse(self, ext, target: str, stamp: str) -> bool:
        """Copy an up-to-date build of ``ext`` made with the same settings elsewhere in this tree."""
        inputs = list(ext.sources) + list(ext.depends or ()) + HEADERS
        if _newer_than_all(target, inputs):
            return False  # up to date where it is: the ordinary build skips it
        for other in self._other_outputs(ext):
            if os.path.abspath(other) == os.path.abspath(target) or not os.path.exists(other):
                continue
            if _read_stamp(other) == stamp and _newer_than_all(other, inputs):
                os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
                shutil.copyfile(other, target)
                shutil.copymode(other, target)
                _write_stamp(target, stamp)
                sys.stderr.write(f"pynuma: {ext.name} is up to date in {other}: copied, not compiled again\n")
                return True
        return False

    def _other_outputs(self, ext):
        """Where a regular build of this tree (``pip install .``, ``setup.py build_ext``) put ``ext``."""
        filename = self.get_ext_filename(ext.name)  # pynuma/_native_x.cpython-...so
        yield os.path.join("build", f"lib.{sysconfig.get_platform()}-{sys.implementation.cache_tag}", filename)

    def _give_up(self, err, name="native core"):
        if REQUIRE_NATIVE:
            raise
        sys.stderr.write(f"pynuma: not building {name} ({err}); the pure-Python path will be used\n")


CYTHON_INPUTS = ("setup.py", *sorted(glob.glob(os.path.join("pynuma", "*.pxd"))),
                 *sorted(glob.glob(os.path.join("pynuma", "*.pxi"))))


# list settings a .pyx may give in its "# distutils: key = a b c" header
HEADER_KEYS = ("sources", "include_dirs", "libraries", "library_dirs", "extra_compile_args", "extra_link_args",
               "depends")


def _pyx_of(ext) -> str:
    return next(src for src in ext.sources if src.endswith(".pyx"))


def _distutils_header(pyx: str) -> dict:
    """``{key: [values]}`` from the leading ``# distutils: key = values`` comment lines of ``pyx``."""
    out = {}
    with open(pyx, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("#"):
                break
            body = line[1:].strip()
            if not body.startswith("distutils:"):
                continue
            key, _, value = (part.strip() for part in body[len("distutils:"):].partition("="))
            if key not in HEADER_KEYS:
                raise ValueError(f"{pyx}: '# distutils: {key}' is not handled by setup.py")
            out.setdefault(key, []).extend(value.replace(",", " ").split())
    return out


def _generated_is_current(ext, cython_version: str) -> bool:
    """The C generated from ``ext``'s .pyx is newer than its Cython inputs and came from this Cython."""
    pyx = _pyx_of(ext)
    c_file = pyx[:-4] + ".c"
    if not _newer_than_all(c_file, [pyx, *CYTHON_INPUTS]):
        return False
    try:
        with open(c_file, encoding="utf-8", errors="replace") as f:
            first = f.readline()
    except OSError:
        return False
    return f"Generated by Cython {cython_version} " in first


def _stamp_path(built: str):
    """Where the settings of a build output of this tree are kept (``build/``, outside any wheel); None elsewhere."""
    rel = os.path.relpath(os.path.abspath(built))
    if rel.startswith(os.pardir):
        return None  # a temporary build directory: nothing else will look for it
    return os.path.join("build", "pynuma-stamps", rel.replace(os.sep, "__"))


def _read_stamp(built: str):
    path = _stamp_path(built)
    try:
        with open(path) as f:
            return f.read()
    except (OSError, TypeError):
        return None


def _write_stamp(built: str, stamp: str) -> None:
    path = _stamp_path(built)
    if path is not None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(stamp)


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _newer_than_all(path, inputs) -> bool:
    """``path`` exists and was written after every one of ``inputs`` (missing inputs count as newer)."""
    built = _mtime(path)
    if built is None:
        return False
    for source in inputs:
        changed = _mtime(source)
        if changed is None or changed > built:
            return False
    return True


def native_extensions():
    """One extension per ``pynuma/_native_*.pyx``; Cython runs later, in ``build_ext``, and only then."""
    if os.environ.get("PYNUMA_PURE_BUILD") == "1":
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
    return [Extension("pynuma." + os.path.basename(s)[:-4], [s], depends=HEADERS) for s in sources]


setup(ext_modules=native_extensions(), cmdclass={"build_ext": OptionalBuildExt})
