"""Fixtures for the notebook layer: a real IPython shell with fresh samza_nb magics per test, and a private
in-memory broker namespace per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from tests.requirements import require

# jupyter_core warns (DeprecationWarning, an error under this suite's filterwarnings) unless told to use
# the platformdirs locations it is migrating to.
os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")

require("IPython", "the notebook layer needs IPython (samza_nb[notebook])")

# (Imported only once the requirement is checked.)
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.testing import globalipapp  # noqa: E402

from samza_nb.notebook.magics.registration import SamzaMagics  # noqa: E402
from samza_nb.systems.inmemory.system import InMemoryBroker  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    """The ``browser`` marker (also declared in pyproject.toml once it lists it: harmless twice)."""
    config.addinivalue_line("markers", "browser: drives JupyterLab in headless Chromium (needs chromium)")


@pytest.fixture
def shell() -> InteractiveShell:
    """IPython's testing shell (a TerminalInteractiveShell, shared by the test session)."""
    return globalipapp.get_ipython()


@pytest.fixture(autouse=True)
def no_magics_left_behind() -> Iterator[None]:
    """After each test, the samza_nb magics last registered on the shared shell (by ``%load_ext`` or a test)
    are closed: a job of one test never tells its failure into a cell of the next."""
    yield
    registered = globalipapp.get_ipython().magics_manager.registry.get(SamzaMagics.__name__)
    if isinstance(registered, SamzaMagics):
        registered.close()


@pytest.fixture
def magics(shell: InteractiveShell) -> Iterator[SamzaMagics]:
    """Fresh samza_nb magics (and so a fresh session) registered on the shell; text output."""
    instance = SamzaMagics(shell, dashboard="text")
    shell.register_magics(instance)
    yield instance
    instance.close()


@pytest.fixture
def broker() -> Iterator[InMemoryBroker]:
    """An in-memory broker of its own namespace (dropped after the test)."""
    namespace = f"nb-{uuid.uuid4().hex[:8]}"
    yield InMemoryBroker.named(namespace)
    InMemoryBroker.drop(namespace)
