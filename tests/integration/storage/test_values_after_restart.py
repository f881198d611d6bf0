"""A job that changes a value read from a store without putting it reads the same value in its run and after
a restart (issue 39, item 4): the change reached neither (real DuckDB state file, two runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from samza_nb import OutgoingMessageEnvelope, SystemStream
from samza_nb.testing import TestRunner

OUT = SystemStream("test", "seen")


class Careless:
    """``set`` puts {"n": 1}; ``change`` adds 100 to the value read, without a put; ``read`` sends it."""

    def init(self, context: Any) -> None:
        self.store = context.get_store("totals")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if envelope.message == "set":
            self.store.put("k", {"n": 1, "seen": []})
        elif envelope.message == "change":
            value = self.store.get("k")
            value["n"] += 100
            value["seen"].append("change")
        else:
            collector.send(OutgoingMessageEnvelope(OUT, self.store.get("k")))


def test_a_value_changed_without_a_put_reads_the_same_in_the_run_and_after_a_restart(tmp_path: Path) -> None:
    config = {
        "stores.totals.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.totals.key.serde": "string",
        "stores.totals.msg.serde": "json",
        "job.logged.store.base.dir": str(tmp_path),
    }
    first = TestRunner.of(Careless).add_input("in", ["set", "change", "read"]).add_output("seen")
    in_the_run = first.add_config(config).run().output("seen")[0]
    # The same input with one more message: the restart resumes after its checkpoint (in the state file).
    restarted = TestRunner.of(Careless).add_input("in", ["set", "change", "read", "read"]).add_output("seen")
    after_restart = restarted.add_config(config).run().output("seen")[0]
    assert in_the_run == after_restart == [{"n": 1, "seen": []}]
