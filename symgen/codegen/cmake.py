"""The build files of every package's C: ``CMakeLists.txt`` (``templates/cmake_lists.txt.j2``:
``NAME.c`` compiled once into a static and a shared library, exported as ``NAME::NAME`` and
``NAME::NAME_shared``, installed with ``NAME.h``, a CMake package config and) ``NAME.pc``
(``templates/pkg_config.pc.j2``, pkg-config, relocatable: its prefix is found from its place)."""
from __future__ import annotations

import re


def cmake_version(version: str) -> str:
    """symgen's version as CMake's ``project(VERSION)`` takes it: its leading dotted numbers."""
    found = re.match(r"\d+(\.\d+)*", version)
    return found.group(0) if found else "0"


def build_files(render, ctx: dict, name: str) -> dict:
    """``{file name: text}`` of the package's CMakeLists.txt and pkg-config file."""
    return {"CMakeLists.txt": render("cmake_lists.txt.j2", ctx), f"{name}.pc": render("pkg_config.pc.j2", ctx)}
