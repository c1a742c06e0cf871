"""Package attributes load on first use, bind with their module, and unknown names fail."""

from __future__ import annotations

import pytest

from tests.support import python_output


def test_unknown_attribute_names_the_package():
    import hivemind_lab.experiments as experiments

    with pytest.raises(
        AttributeError, match=r"'hivemind_lab\.experiments' has no attribute 'nope'"
    ):
        experiments.nope  # noqa: B018


def test_a_package_loads_its_modules_only_when_an_attribute_is_read(tmp_path):
    """Reading ``experiments.ReplayReport`` imports the submodule ``replays``; the function
    ``experiments.replay`` is bound with it."""
    script = (
        "import sys\n"
        "import hivemind_lab.experiments as e\n"
        "print('hivemind_lab.experiments.sweep' in sys.modules)\n"
        "e.load_spec\n"
        "print('hivemind_lab.experiments.sweep' in sys.modules, 'polars' in sys.modules)\n"
        "e.ReplayReport\n"
        "print(callable(e.replay) and not isinstance(e.replay, type(sys)))\n"
    )
    assert python_output(script, tmp_path) == ["False", "False", "False", "True"]


def test_the_wire_layer_loads_neither_the_openai_sdk_nor_the_agents(tmp_path):
    """``hivemind_lab.llm`` is the wire layer: its protocol must not pull in a provider's SDK,
    and nothing in it may import the agents (the stand-in lives above it, in agents.policy)."""
    script = (
        "import sys\n"
        "import hivemind_lab.llm.base, hivemind_lab.llm.structured, hivemind_lab.llm.cache\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'httpx'}))\n"
        "print([m for m in sys.modules if m.startswith('hivemind_lab.agents')])\n"
    )
    assert python_output(script, tmp_path) == ["[]", "[]"]


@pytest.mark.parametrize(
    ("package", "above"),
    [
        ("hivemind_lab.llm", "hivemind_lab.agents"),  # the stand-in lives above the wire
        ("hivemind_lab.problems", "hivemind_lab.agents"),  # agents read the decision, not back
    ],
)
def test_no_module_of_a_lower_package_imports_a_higher_one(package, above):
    """A static check: the dependency runs one way, even inside functions (a lazy import hides
    a loop; it does not break it)."""
    import ast
    import importlib
    from pathlib import Path

    offenders = []
    for path in Path(importlib.import_module(package).__file__ or "").parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [module]
            offenders += [f"{path.name}: {n}" for n in names if n and n.startswith(above)]
    assert offenders == []


def _lazy_packages() -> list[str]:
    """Every package whose attributes load on first use (an ``__init__`` calling lazy_exports)."""
    from pathlib import Path

    import hivemind_lab

    root = Path(hivemind_lab.__file__).parent
    found = []
    for init in sorted(root.rglob("__init__.py")):
        if "lazy_exports(__name__" in init.read_text("utf-8"):
            parts = init.parent.relative_to(root.parent).parts
            found.append(".".join(parts))
    return found


def test_the_lazy_packages_are_found():
    assert {"hivemind_lab", "hivemind_lab.llm", "hivemind_lab.problems"} <= set(_lazy_packages())


@pytest.mark.parametrize("package", _lazy_packages())
def test_a_lazy_package_writes_its_names_once(package):
    """The table is read from the ``TYPE_CHECKING`` re-exports, the names' one place, and
    ``__all__`` is its names; no package restates them in a table of its own."""
    import importlib
    from pathlib import Path

    module = importlib.import_module(package)
    assert module._HOMES and sorted(module.__all__) == sorted(module._HOMES)
    assert "_HOMES: dict" not in Path(module.__file__).read_text("utf-8")


@pytest.mark.parametrize("package", _lazy_packages())
def test_every_name_of_a_lazy_table_imports_from_its_home(package):
    import importlib

    module = importlib.import_module(package)
    for name, home in module._HOMES.items():
        assert getattr(module, name) is getattr(importlib.import_module(home), name), name


def test_no_public_name_is_also_a_submodule_of_its_package():
    """Importing ``pkg.x`` anywhere binds the module ``x`` on ``pkg``; a lazily exported ``x``
    would then read as the module, depending on what else the process imported first (this
    broke ``from hivemind_lab.experiments import replay`` in a full test run only)."""
    import importlib
    import pkgutil

    import hivemind_lab

    clashes = []
    for info in pkgutil.walk_packages(hivemind_lab.__path__, "hivemind_lab."):
        if not info.ispkg:
            continue
        package = importlib.import_module(info.name)
        homes = getattr(package, "_HOMES", None)
        if homes is None:
            continue
        submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
        clashes += [f"{info.name}.{n}" for n in sorted(set(homes) & submodules)]
    assert clashes == []
