"""%load_ext samza_nb: the magics and the names a task cell needs."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import samza_nb
from samza_nb.notebook.extension import load_ipython_extension, unload_ipython_extension
from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.notebook.session import NotebookSession
from samza_nb.systems.inmemory.system import InMemoryBroker

from .helpers import config_cell, run

IDLE_TASK = """%%samza_task
class Idle:
    def process(self, envelope, collector, coordinator):
        pass
"""

MAGICS = {
    "line": ["samza_config", "samza_run", "samza_stop", "samza_status", "samza_checkpoints"],
    "cell": ["samza_config", "samza_task", "samza_sql"],
}


def _forget_the_extension(shell: InteractiveShell) -> object:
    """The shared shell as if samza_nb had never been loaded: ``%load_ext`` of a module IPython remembers as
    loaded does nothing, so an earlier test's load would make a test of loading pass whatever loading does.
    Returns the magics registered before (a new load must register another instance)."""
    shell.extension_manager.loaded.discard("samza_nb")
    return shell.magics_manager.registry.get(SamzaMagics.__name__)


def test_load_ext_registers_every_magic(shell: InteractiveShell) -> None:
    before = _forget_the_extension(shell)
    shell.run_line_magic("load_ext", "samza_nb")
    registered = shell.magics_manager.registry["SamzaMagics"]
    assert isinstance(registered, SamzaMagics)
    assert registered is not before
    for kind, names in MAGICS.items():
        for name in names:
            magic = shell.find_magic(name, kind)
            assert magic is not None, (kind, name)
            assert getattr(magic, "__self__", None) is registered, (kind, name)


def test_loading_binds_public_names_only_where_free(shell: InteractiveShell) -> None:
    shell.user_ns["SystemStream"] = "mine"
    shell.user_ns.pop("StreamTask", None)
    shell.user_ns.pop("samza", None)
    try:
        load_ipython_extension(shell)
        assert shell.user_ns["SystemStream"] == "mine"
        assert shell.user_ns["StreamTask"] is samza_nb.StreamTask
        session = shell.user_ns["samza"]
        assert isinstance(session, NotebookSession)
        assert shell.magics_manager.registry["SamzaMagics"].session is session
        # Loading again makes a new session and rebinds ``samza`` to it.
        load_ipython_extension(shell)
        assert shell.user_ns["samza"] is not session
        unload_ipython_extension(shell)
    finally:
        shell.user_ns.pop("SystemStream", None)


def test_samza_nb_entry_point_delegates_here(shell: InteractiveShell) -> None:
    before = _forget_the_extension(shell)
    samza_nb.load_ipython_extension(shell)
    registered = shell.magics_manager.registry["SamzaMagics"]
    assert isinstance(registered, SamzaMagics)
    assert registered is not before
    assert shell.user_ns["samza"] is registered.session


def test_settings_are_traitlets(shell: InteractiveShell) -> None:
    load_ipython_extension(shell)
    shell.run_line_magic("config", "SamzaMagics.dashboard = 'off'")
    magics = shell.magics_manager.registry["SamzaMagics"]
    assert magics.dashboard == "off"
    assert magics._ui(no_dashboard=False) == "off"
    shell.run_line_magic("config", "SamzaMagics.dashboard = 'auto'")
    assert magics._ui(no_dashboard=False) == "text"  # a terminal shell has no widget front-end


def test_errors_fall_back_to_usage_error_when_the_handler_slot_is_taken(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = (shell.custom_exceptions, shell.CustomTB)
    shell.set_custom_exc((KeyError,), lambda *args, **kwargs: None)
    try:
        magics = SamzaMagics(shell)
        shell.register_magics(magics)
        result = shell.run_cell("%samza_run", store_history=False)
        assert isinstance(result.error_in_exec, UsageError)
        err = capsys.readouterr().err.strip()
        assert err.startswith("UsageError: samza_run: no job config: write a %%samza_config cell")
        assert "\n" not in err
        assert shell.custom_exceptions == (KeyError,)
    finally:
        shell.custom_exceptions, shell.CustomTB = saved


def test_without_ipywidgets_the_dashboard_degrades_to_text(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    from samza_nb.notebook.magics import registration as magics_module

    magics = SamzaMagics(shell)
    monkeypatch.setattr(shell, "kernel", object(), raising=False)  # as in a Jupyter kernel
    assert magics._ui(no_dashboard=False) == "widgets"
    monkeypatch.setattr(magics_module, "widgets_available", lambda: False)
    assert magics._ui(no_dashboard=False) == "text"
    magics.dashboard = "widgets"
    assert magics._ui(no_dashboard=False) == "text"
    assert magics._ui(no_dashboard=True) == "off"


def test_closed_magics_tell_no_failure_into_later_cells(
    shell: InteractiveShell, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failure of a job of magics that were closed (a reload, or a test's teardown) is not told in the next
    cell of whoever runs it: the closed magics no longer speak in cells."""
    first = SamzaMagics(shell, dashboard="text")
    shell.register_magics(first)
    try:
        run(shell, config_cell(broker, "missing"))  # no such stream: the job fails as it starts
        run(shell, IDLE_TASK)
        run(shell, "%samza_run")
        assert all(job_run.join(10) for job_run in first.session.runs.values())
        assert [job_run.outcome for job_run in first.session.runs.values()] == ["failed"]
    finally:
        first.close()
    capsys.readouterr()
    run(shell, "1 + 1")
    assert "samza_nb:" not in capsys.readouterr().err
