"""MkDocs hook: the pages' generated parts, written when the site is built.

A page holds a marker, an HTML comment of the form ``<!-- symgen:WHAT [ARGUMENT] -->``, which is
replaced by Markdown generated from the code (``symgen.docs_reference``) or from the results' JSON
(``symgen.docs_results``): ``functions`` (every function of the registry), ``c-contract`` and
``c-example`` (the C API), ``results RIVAL`` (a rival's tables and plots). An unknown marker fails
the build.
"""
from __future__ import annotations

import re

MARKER = re.compile(r"<!--\s*symgen:(?P<what>[\w-]+)(?:\s+(?P<arg>[\w-]+))?\s*-->")


def _expand(match) -> str:
    from symgen import docs_reference as R
    from symgen import docs_results

    what, arg = match["what"], match["arg"]
    if what == "functions":
        return R.functions_page()
    if what == "c-contract":
        return R.c_contract()
    if what == "c-example":
        return R.c_declarations(arg or "arm4")
    if what == "results":
        return docs_results.page(arg)
    raise ValueError(f"unknown marker symgen:{what}")


def on_files(files, config):
    """The results' plots, drawn from docs/results/*.json: per rival with runs, one SVG of the ratios
    and (functions timed on robots of several sizes) one of time against nv."""
    from mkdocs.structure.files import File

    from symgen import docs_results

    for rival in docs_results.RIVALS:
        for name, svg in ((rival, docs_results.plot(rival)), (f"{rival}_dof", docs_results.dof_plot(rival))):
            if svg is not None:
                files.append(File.generated(config, f"results/{name}.svg", content=svg))
    return files


def on_page_markdown(markdown, page, config, files):
    return MARKER.sub(_expand, markdown)
