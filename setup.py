"""The packages to install: every folder with an ``__init__.py`` under each folder that
pyproject.toml's ``[tool.setuptools.package-dir]`` maps, so that a new package folder (a
protocol family, a recorder) installs with no second list to keep. Everything else about
the build is in pyproject.toml."""

import sys
from pathlib import Path

from setuptools import setup

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


setup(packages=packages())
