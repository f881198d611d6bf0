"""%%samza_config and %samza_config key=value in a real IPython shell."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from samza_nb.notebook.magics.registration import SamzaMagics

from .helpers import error_line, run


def test_config_cell_replaces_the_config_and_says_what_it_is(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    run(shell, "%%samza_config\njob.name = first\ntask.inputs = mem.a\nextra.key = 1\n")
    result = run(shell, "%%samza_config\n# comment\njob.name = clicks\ntask.inputs = mem.clicks\n")
    assert result.success
    assert magics.session.config == {"job.name": "clicks", "task.inputs": "mem.clicks"}
    out = capsys.readouterr().out.splitlines()
    assert (
        out[-1]
        == "job 'clicks': 2 keys; inputs mem.clicks; in-memory checkpoints kept for this kernel's lifetime"
    )


def test_line_form_sets_and_overrides_keys(shell: InteractiveShell, magics: SamzaMagics) -> None:
    run(shell, "%%samza_config\njob.name = j\ntask.max.concurrency = 2\n")
    assert run(shell, '%samza_config task.max.concurrency=8 job.id="run 2"').success
    assert magics.session.config == {"job.name": "j", "task.max.concurrency": "8", "job.id": "run 2"}


def test_bare_line_shows_the_config_as_properties(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    run(shell, "%samza_config")
    assert "no job config yet" in capsys.readouterr().out
    run(shell, "%samza_config job.name=x task.inputs=mem.in")
    capsys.readouterr()
    run(shell, "%samza_config")
    assert capsys.readouterr().out.startswith("job.name = x\ntask.inputs = mem.in\n")


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (
            "%%samza_config\njob.name = j\nthis line has no separator\n",
            "samza_config cell:3: expected 'key = value'",
        ),
        ("%%samza_config\ntask.max.concurrency = many\n", "task.max.concurrency"),
        ("%samza_config task.max.concurrency", "is not key=value"),
        ("%%samza_config extra\njob.name = j\n", "the cell form takes no arguments"),
        ("%samza_config 'unclosed", "cannot split"),
    ],
)
def test_mistakes_are_one_line_usage_errors(
    shell: InteractiveShell,
    magics: SamzaMagics,
    capsys: pytest.CaptureFixture[str],
    cell: str,
    message: str,
) -> None:
    assert message in error_line(run(shell, cell), capsys)
    assert magics.session.config == {}


def test_config_change_while_running_says_it_applies_next_time(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    class Running:
        done = False

    magics.session.runs["x"] = Running()  # type: ignore[assignment]
    run(shell, "%samza_config job.name=x")
    assert "applies to the next %samza_run" in capsys.readouterr().out
    magics.session.runs.clear()


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (
            "%%samza_config\njob.name = j\ntask.max.concurency = 4\n",
            "samza_config: unknown key task.max.concurency: did you mean task.max.concurrency?",
        ),
        (
            "%%samza_config\njob.name = j\n"
            "systems.mem.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
            "systems.mem.samza.ofset.default = oldest\n",
            "samza_config: unknown key systems.mem.samza.ofset.default: did you mean "
            "systems.mem.samza.offset.default?",
        ),
        (
            "%%samza_config\njob.name = j\n"
            "systems.mist.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
            "systems.mst.samza.offset.default = oldest\n",
            "samza_config: unknown key systems.mst.samza.offset.default: system 'mst' has no factory "
            "(systems.mst.samza.factory): did you mean systems.mist.samza.offset.default?",
        ),
        ("%samza_config task.comit.ms=100", "unknown key task.comit.ms: did you mean task.commit.ms?"),
    ],
)
def test_a_typo_of_a_known_key_is_an_error_naming_the_key_it_resembles(
    shell: InteractiveShell,
    magics: SamzaMagics,
    capsys: pytest.CaptureFixture[str],
    cell: str,
    message: str,
) -> None:
    run(shell, "%%samza_config\njob.name = before\n")
    capsys.readouterr()
    assert error_line(run(shell, cell), capsys).endswith(message)
    assert magics.session.config == {"job.name": "before"}, "the misspelt config is not taken"


def test_keys_far_from_every_known_key_are_taken(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    cell = (
        "%%samza_config\njob.name = j\nmyapp.greeting = hello\n"
        "systems.mem.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
        "systems.numbers.streams.ints.count = 5\n"  # a custom system's own key
    )
    assert run(shell, cell).success
    assert capsys.readouterr().out.splitlines() == [
        "job 'j': 4 keys; inputs (task.inputs not set yet); in-memory checkpoints kept for this kernel's "
        "lifetime"
    ]
    assert run(shell, "%samza_config stores.counts.rocksdb.block.size=4096 systems.mst.x=1").success
    assert magics.session.config["myapp.greeting"] == "hello"


def test_the_config_summary_counts_one_key_in_the_singular(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    run(shell, "%%samza_config\njob.name = one")
    assert capsys.readouterr().out.startswith("job 'one': 1 key; inputs")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "systems.mem.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactor",
            "samza_config: systems.mem.samza.factory='samza_nb.systems.inmemory.InMemorySystemFactor' cannot "
            "be imported: module 'samza_nb.systems.inmemory' has no attribute 'InMemorySystemFactor'; did "
            "you mean samza_nb.systems.inmemory.InMemorySystemFactory?",
        ),
        (
            "stores.s.factory = samza_nb.storage.duckdb.DuckDBStoreFactori",
            "did you mean samza_nb.storage.duckdb.DuckDBStoreFactory?",
        ),
        ("task.class = no.such.Task", "samza_config: task.class='no.such.Task' cannot be imported"),
        (
            "stores.s.key.serde = strng",
            "samza_config: stores.s.key.serde='strng' is not a serde: no serde has that name; did you mean "
            "string?",
        ),
    ],
)
def test_a_misspelt_class_path_or_serde_name_fails_in_the_config_cell(
    shell: InteractiveShell,
    magics: SamzaMagics,
    capsys: pytest.CaptureFixture[str],
    line: str,
    message: str,
) -> None:
    run(shell, "%%samza_config\njob.name = before\n")
    capsys.readouterr()
    error = error_line(run(shell, f"%%samza_config\njob.name = j\n{line}\n"), capsys)
    assert message in error and "\n" not in error
    assert magics.session.config == {"job.name": "before"}, "the misspelt config is not taken"
