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
    """Reading ``experiments.ReplayReport`` imports the submodule ``replay``, which binds the
    module on the package; ``experiments.replay`` must still be the function."""
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
