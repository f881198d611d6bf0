"""``samza-nb clean`` removes the code archives the Spark runner shipped (one per edited version of the task's
package; the driver makes the one it needs anew at each start)."""

from __future__ import annotations

from pathlib import Path

from samza_nb.config import Config
from samza_nb.runtime.clean import clean_job
from samza_nb.runtime.spark.ship import shipped_code_directory


def test_clean_removes_the_shipped_code_archives(tmp_path: Path) -> None:
    config = Config(
        {
            "job.name": "shipped",
            "task.class": "pipeline.task.Task",
            "task.inputs": "log.clicks",
            "job.logged.store.base.dir": str(tmp_path / "state"),
        }
    )
    archives = shipped_code_directory(config)
    archives.mkdir(parents=True)
    for version in ("0123456789ab", "ba9876543210"):
        (archives / f"pipeline-{version}.zip").write_bytes(b"PK" + b"\0" * 98)
    listed = "\n".join(clean_job(config, dry_run=True))
    assert "shipped code archives" in listed and "2 file" in listed, listed
    assert len(list(archives.iterdir())) == 2, "a dry run removes nothing"
    done = "\n".join(clean_job(config))
    assert "shipped code archives" in done, done
    assert not archives.exists()
