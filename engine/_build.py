"""Which build runs: the compiled modules (mypyc, ``setup.py``) or the pure-Python ones.

A compiled install has, next to each compiled ``engine``/``ai`` module's ``.py`` file, an
extension module (``.so``/``.pyd``) that Python would import first. :func:`install` (called
by ``engine/__init__.py`` before any other ``engine`` or ``ai`` module is imported) decides
once per process:

* ``HEKA_PURE_PYTHON=1`` (or ``true``/``yes``/``on``): the pure-Python modules, always;
* no extension modules: pure Python (nothing to choose);
* in a source tree (``make compile`` builds in place), an extension older than its ``.py``
  file (a source edited since): pure Python, with a warning, rather than rules that are not
  the source's. The build is all or nothing: compiled modules call each other natively, so
  one stale module cannot be swapped alone. (Not checked in an installed wheel, whose file
  times are those of the unpacking);
* otherwise the compiled modules.

For pure Python a meta-path finder loads the ``.py`` source of every ``engine.*`` and
``ai.*`` module that has one, ahead of the extension. Standard library only; never compiled.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

#: The packages whose modules may be compiled.
PACKAGES = ("engine", "ai")
PURE_ENV = "HEKA_PURE_PYTHON"
#: The library the compiled modules share (setup.py: ``group_name="heka"``).
GROUP = "heka__mypyc"

_ROOT = Path(__file__).resolve().parent.parent
_chosen: dict[str, str] = {}  # "build" -> the choice, made once per process


def _env_pure() -> bool:
    return os.environ.get(PURE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def compiled_modules() -> list[tuple[Path, Path]]:
    """(extension, source) of every compiled module of the packages in this install."""
    out = []
    for package in PACKAGES:
        base = _ROOT / package
        if not base.is_dir():
            continue
        for folder in (base, *(p for p in base.iterdir() if p.is_dir() and (p / "__init__.py").exists())):
            for entry in os.scandir(folder):
                for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                    if entry.name.endswith(suffix):
                        source = folder / (entry.name[: -len(suffix)] + ".py")
                        if source.exists():
                            out.append((Path(entry.path), source))
                        break
    return out


class PureSourceFinder(importlib.abc.MetaPathFinder):
    """Loads ``engine.*``/``ai.*`` modules from their ``.py`` files, ahead of extensions."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] not in PACKAGES or not path:
            return None
        name = fullname.rpartition(".")[2]
        for folder in path:
            source = os.path.join(folder, name + ".py")
            if os.path.isfile(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None  # a subpackage or not ours: the normal finders


def install() -> str:
    """Choose the build for this process (once) and return it: ``"compiled"``/``"pure"``."""
    if "build" in _chosen:
        return _chosen["build"]
    modules = compiled_modules()
    stale: list[Path] = []
    if modules and (_ROOT / "pyproject.toml").exists():
        # The compiled code is the group library (setup.py: group_name="heka"); the
        # per-module extensions are shims that a rebuild may leave untouched.
        built = [p.stat().st_mtime for p in _ROOT.glob(GROUP + ".*")] or [
            ext.stat().st_mtime for ext, _ in modules
        ]
        stale = [src for _, src in modules if src.stat().st_mtime > min(built)]
    if _env_pure() or not modules or stale:
        if stale and not _env_pure():
            warnings.warn(
                f"heka: {len(stale)} compiled module(s) are older than their source "
                f"(e.g. {stale[0].relative_to(_ROOT)}): running the pure-Python build; "
                "`make compile` rebuilds",
                RuntimeWarning,
                stacklevel=2,
            )
        if modules and not any(isinstance(f, PureSourceFinder) for f in sys.meta_path):
            sys.meta_path.insert(0, PureSourceFinder())
        _chosen["build"] = "pure"
    else:
        _load_group_library()
        _chosen["build"] = "compiled"
    return _chosen["build"]


def _load_group_library() -> None:
    """The compiled modules are shims over one library, ``heka__mypyc``, beside the packages
    (site-packages, or the source tree with ``make compile``). An editable install does not
    put the source tree on ``sys.path``, so load it from there by path."""
    if GROUP in sys.modules:
        return
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        library = _ROOT / (GROUP + suffix)
        if library.exists():
            spec = importlib.util.spec_from_file_location(GROUP, library)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                sys.modules[GROUP] = module
                spec.loader.exec_module(module)
            return


def build() -> str:
    """The build running in this process: ``"compiled"`` (mypyc) or ``"pure"`` (Python)."""
    return install()


def is_compiled(module: ModuleType) -> bool:
    """Whether ``module`` was loaded from an extension module (for tests and benchmarks)."""
    return str(getattr(module, "__file__", "")).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


install()  # on import: engine/__init__.py imports this module before anything else
