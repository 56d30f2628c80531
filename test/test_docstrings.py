"""The public core API documents its arguments the numpydoc way (python-control's
docstrings_test): every function a fric_core module exports in ``__all__`` has ``Parameters`` and
``Returns`` sections, and ``Parameters`` names exactly the arguments of its signature."""

import importlib
import inspect
import pkgutil
import re

import fric_core


def _public_functions():
    for info in pkgutil.walk_packages(fric_core.__path__, "fric_core."):
        mod = importlib.import_module(info.name)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                yield f"{info.name}.{name}", obj


def _section(doc: str, title: str) -> str | None:
    m = re.search(rf"^\s*{title}\n\s*-{{3,}}\n(.*?)(?=^\s*\w[\w ]*\n\s*-{{3,}}\n|\Z)", doc,
                  re.S | re.M)
    return m.group(1) if m else None


def _documented(section: str) -> set[str]:
    """Names of the ``name : type`` (or ``name``) entries, at the section's own indentation."""
    lines = [ln for ln in section.splitlines() if ln.strip()]
    if not lines:
        return set()
    indent = min(len(ln) - len(ln.lstrip()) for ln in lines)
    names = set()
    for ln in lines:
        if len(ln) - len(ln.lstrip()) == indent:
            for part in ln.split(":")[0].split(","):
                names.add(part.strip().lstrip("*"))
    return names


def test_there_are_public_functions_to_check():
    assert len(list(_public_functions())) > 60


def test_public_core_functions_have_parameters_and_returns_sections():
    problems = []
    for qual, fn in _public_functions():
        doc = inspect.getdoc(fn) or ""
        params = _section(doc, "Parameters")
        wanted = {p.name for p in inspect.signature(fn).parameters.values()}
        if wanted and params is None:
            problems.append(f"{qual}: no Parameters section")
        elif wanted and _documented(params) != wanted:
            problems.append(f"{qual}: Parameters documents {sorted(_documented(params))}, "
                            f"the signature has {sorted(wanted)}")
        if _section(doc, "Returns") is None and _section(doc, "Yields") is None:
            problems.append(f"{qual}: no Returns section")
    assert not problems, "\n".join(problems)
