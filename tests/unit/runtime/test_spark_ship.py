"""The job's code as Spark ships it: the top-level package (or module) of ``task.class`` zipped as
``--py-files`` takes it (deterministic, without ``__pycache__`` and hidden files), importable from the zip;
installed packages and samza_nb are not shipped; a namespace package and a too large package are refused in
one line naming the key."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from samza_nb import Config, ConfigError
from samza_nb.runtime.spark import ship
from samza_nb.runtime.spark.package_zip import archive_name, package_files, zip_bytes
from samza_nb.runtime.spark.ship import job_code, package_archive

HELPERS = "def double(n):\n    return 2 * n\n"
TASK = "from mypipeline.helpers import double\n\n\nclass Task:\n    factor = double(21)\n"


def make_package(root: Path, name: str = "mypipeline") -> Path:
    """``root/<name>``: a package of two modules (the task imports the helper), with what is not shipped."""
    package = root / name
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(HELPERS)
    (package / "task.py").write_text(TASK.replace("mypipeline", name))
    (package / "sub" / "__init__.py").write_text("")
    (package / "schema.json").write_text("{}")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "task.cpython-311.pyc").write_bytes(b"\0" * 16)
    (package / "sub" / "__pycache__").mkdir()
    (package / ".git").mkdir()
    (package / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (package / ".task.py.swp").write_text("editor")
    (package / "stale.pyc").write_bytes(b"\0")
    return package


def config(dotted: str, key: str = "task.class") -> Config:
    return Config({"job.name": "shipped", key: dotted})


def test_the_zip_holds_the_package_without_caches_and_hidden_files(tmp_path: Path) -> None:
    package = make_package(tmp_path)
    names = zipfile.ZipFile(package_archive_path(package, tmp_path / "out")).namelist()
    assert names == [
        "mypipeline/__init__.py",
        "mypipeline/helpers.py",
        "mypipeline/schema.json",
        "mypipeline/sub/__init__.py",
        "mypipeline/task.py",
    ]


def package_archive_path(package: Path, out: Path) -> Path:
    code = ship.JobCode("task.class", f"{package.name}.task.Task", package.name, package)
    return package_archive(code, out)


def test_the_zip_is_the_same_bytes_whatever_the_files_times_and_modes(tmp_path: Path) -> None:
    package = make_package(tmp_path)
    first = zip_bytes(package_files(package))
    for file in package.rglob("*"):
        os.utime(file, (1_000_000_000, 1_000_000_000))
    (package / "helpers.py").chmod(0o600)
    again = zip_bytes(package_files(package))
    assert again == first
    assert archive_name("mypipeline", again) == archive_name("mypipeline", first)
    (package / "helpers.py").write_text(HELPERS + "# changed\n")
    changed = zip_bytes(package_files(package))
    assert archive_name("mypipeline", changed) != archive_name("mypipeline", first)


def test_the_archive_is_written_once_and_named_by_its_content(tmp_path: Path) -> None:
    package = make_package(tmp_path)
    first = package_archive_path(package, tmp_path / "out")
    written = first.stat().st_mtime_ns
    assert package_archive_path(package, tmp_path / "out") == first
    assert first.stat().st_mtime_ns == written
    assert first.name.startswith("mypipeline-") and first.suffix == ".zip"
    assert [p.name for p in (tmp_path / "out").iterdir()] == [first.name]


def test_a_task_of_the_zipped_package_imports_its_helper_from_the_zip_alone(tmp_path: Path) -> None:
    archive = package_archive_path(make_package(tmp_path / "src"), tmp_path / "out")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from mypipeline.task import Task; import mypipeline; print(Task.factor, mypipeline.__file__)",
        ],
        env={**env, "PYTHONPATH": str(archive)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    factor, origin = done.stdout.split()
    assert factor == "42" and origin.startswith(str(archive))


def test_the_code_of_a_task_in_a_package_is_its_top_level_package(tmp_path: Path) -> None:
    package = make_package(tmp_path)
    code = job_code(config("mypipeline.task.Task"), [str(tmp_path)])
    assert code is not None
    assert (code.key, code.top_level, code.path) == ("task.class", "mypipeline", package)
    nested = job_code(config("mypipeline.sub.Nested", "app.class"), [str(tmp_path)])
    assert nested is not None and (nested.key, nested.path) == ("app.class", package)


def test_the_code_of_a_task_in_a_module_file_is_that_file(tmp_path: Path) -> None:
    (tmp_path / "count_task.py").write_text("class Count: pass\n")
    code = job_code(config("count_task.Count"), [str(tmp_path)])
    assert code is not None and code.path == tmp_path / "count_task.py"
    assert zipfile.ZipFile(package_archive(code, tmp_path / "out")).namelist() == ["count_task.py"]


def test_installed_packages_and_samza_nb_are_not_shipped(tmp_path: Path) -> None:
    installed = tmp_path / "lib" / "python3" / "site-packages"
    make_package(installed, "vendored")
    assert job_code(config("vendored.task.Task"), [str(installed)]) is None
    assert job_code(config("pyarrow.lib.Table"), sys.path) is None
    assert job_code(config("json.JSONDecoder"), sys.path) is None  # the standard library
    assert job_code(config("samza_nb.testing.TestRunner"), sys.path) is None  # a worker must install it
    assert job_code(config("missing_module.Task"), [str(tmp_path)]) is None
    assert job_code(Config({"job.name": "no-class"}), [str(tmp_path)]) is None


def test_a_namespace_package_is_refused_in_one_line_naming_the_key(tmp_path: Path) -> None:
    package = make_package(tmp_path)
    (package / "__init__.py").unlink()
    with pytest.raises(ConfigError) as raised:
        job_code(config("mypipeline.task.Task"), [str(tmp_path)])
    message = str(raised.value)
    assert "\n" not in message and message.startswith("task.class = mypipeline.task.Task: ")
    assert "__init__.py" in message and str(package) in message


def test_a_package_too_large_to_ship_is_refused_in_one_line_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = make_package(tmp_path)
    (package / "model.bin").write_bytes(b"x" * 4096)
    monkeypatch.setattr(ship, "MAX_SHIPPED_BYTES", 1024)
    code = job_code(config("mypipeline.task.Task"), [str(tmp_path)])
    assert code is not None
    with pytest.raises(ConfigError) as raised:
        package_archive(code, tmp_path / "out")
    message = str(raised.value)
    assert "\n" not in message and message.startswith("task.class = mypipeline.task.Task: ")
    assert "spark.ship.code = false" in message
    assert not (tmp_path / "out").exists()


def test_a_container_imports_this_runs_archives_first_then_earlier_ones_then_the_files_directory(
    tmp_path: Path,
) -> None:
    root = tmp_path / "userFiles"
    worker_path = [
        "/opt/driver/src",
        str(root / "mypipeline-aaaaaaaaaaaa.zip"),  # an edit shipped earlier in the session
        str(root / "mypipeline-bbbbbbbbbbbb.zip"),  # the reverted package, first added before it
        "/usr/lib/python3.11",
    ]
    found = ship.shipped_paths(worker_path, ["mypipeline-bbbbbbbbbbbb.zip"], root=str(root))
    assert found == [
        str(root / "mypipeline-bbbbbbbbbbbb.zip"),
        str(root / "mypipeline-aaaaaaaaaaaa.zip"),
        str(root),
    ]
    assert ship.shipped_paths(["./deps.zip"], root=".") == [os.path.abspath("deps.zip"), os.getcwd()]
