"""The packages to install: every folder with an ``__init__.py`` under each folder that
pyproject.toml's ``[tool.setuptools.package-dir]`` maps, so that a new package folder (a
protocol family, a recorder) installs with no second list to keep; and the simulator's
compiled kernel (model/kernel.py: the modules of its MODULES compiled by mypyc, when mypyc
and a C compiler are at hand; without them, or with TOMKIT_PURE_PYTHON=1, the Python files
run and nothing is compiled). Everything else about the build is in pyproject.toml."""

import ast
import hashlib
import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

HERE = Path(__file__).resolve().parent


def packages() -> list[str]:
    dirs = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"]
    found = set()
    for package, folder in dirs.items():
        for init in (HERE / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(HERE / folder)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            found.add(".".join([package, *rel.parts]))
    return sorted(found)


def kernel_modules() -> list[str]:
    """model/kernel.py's MODULES (read, not imported: tomkit is not installed yet)."""
    tree = ast.parse((HERE / "model" / "kernel.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "MODULES" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise RuntimeError("model/kernel.py has no MODULES")


def kernel_extensions() -> list:
    """The kernel's modules as mypyc extensions, or none. mypyc names a module after its
    package folders, so each file is compiled from a copy under build/mypyc-src/tomkit/
    model (the package tomkit.model that pyproject.toml maps to model/)."""
    if os.environ.get("TOMKIT_PURE_PYTHON", "") not in ("", "0"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("tomkit: mypyc not found, the simulator's kernel runs as Python", file=sys.stderr)
        return []
    # mypy reads the kernel's imports (model/process.py, the rules) for their types, so
    # the whole of model/ is staged; only the kernel's modules are compiled, as one group
    # (one shared library, tomkit.model.kernel__mypyc: they call one another natively)
    stage = HERE / "build" / "mypyc-src"
    shutil.rmtree(stage, ignore_errors=True)
    model = stage / "tomkit" / "model"
    shutil.copytree(HERE / "model", model, ignore=shutil.ignore_patterns(
        "__pycache__", "*.so", "*.source-sha256", "*.c", "*.h"))
    (stage / "tomkit" / "__init__.py").touch()
    paths = [str((model / f"{m}.py").relative_to(HERE)) for m in kernel_modules()]
    try:
        return mypycify(["--follow-imports=silent", "--ignore-missing-imports", *paths],
                        only_compile_paths=paths, opt_level="3",
                        group_name="tomkit.model.kernel",
                        target_dir=str(Path("build") / "mypyc"))
    except BaseException as e:  # mypy's errors exit: the Python files run instead
        print(f"tomkit: the simulator's kernel not compiled ({e!r}); it runs as Python",
              file=sys.stderr)
        return []


class KernelBuild(build_ext):
    """Builds the kernel's extensions where a C compiler allows; beside each module's
    extension, the SHA-256 of the source it was compiled from (model/kernel.py loads an
    extension only while its source is unchanged)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # no compiler: the Python files run
            print(f"tomkit: the simulator's kernel not compiled ({e}); it runs as Python",
                  file=sys.stderr)

    def build_extension(self, ext) -> None:  # noqa: ANN001 - setuptools' Extension
        super().build_extension(ext)
        self.stamp(ext, Path(self.get_ext_fullpath(ext.name)))

    def copy_extensions_to_source(self) -> None:
        """An editable install builds elsewhere, then copies each extension beside its
        source (as setuptools does): its stamp goes there too."""
        super().copy_extensions_to_source()
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            fullname = self.get_ext_fullname(ext.name)
            folder = build_py.get_package_dir(fullname.rpartition(".")[0])
            self.stamp(ext, Path(folder) / Path(self.get_ext_filename(fullname)).name)

    @staticmethod
    def stamp(ext, path: Path) -> None:  # noqa: ANN001 - setuptools' Extension
        parts = ext.name.split(".")
        if parts[:2] != ["tomkit", "model"] or parts[-1].endswith("__mypyc"):
            return
        source = HERE / "model" / Path(*parts[2:]).with_suffix(".py")
        path.with_name(path.name + ".source-sha256").write_text(
            hashlib.sha256(source.read_bytes()).hexdigest() + "\n")


setup(packages=packages(), ext_modules=kernel_extensions(),
      cmdclass={"build_ext": KernelBuild})
