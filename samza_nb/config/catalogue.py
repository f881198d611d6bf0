"""The catalogue of known configuration keys: their defaults, types and what values are allowed.

Keys keep Samza's names. A key pattern may hold placeholders (``<system>``, ``<stream>``, ``<name>``) that
match one dotted-name segment (``<stream>`` may contain dots). The documentation's configuration reference
is generated from this catalogue (:func:`describe_keys`) when the site is built.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from samza_nb.config.grouper_names import GROUPER_CHOICES
from samza_nb.config.key_spec import KeySpec
from samza_nb.config.spark_keys import SPARK_KEYS

_OFFSET_CHOICES = ("oldest", "upcoming", "newest")

KEYS: tuple[KeySpec, ...] = (
    KeySpec("job.name", "samza-nb-job", "str", "Name of the job; names its checkpoints and state."),
    KeySpec("job.id", "1", "str", "Instance id of the job, beside job.name."),
    KeySpec("job.default.system", None, "str", "System for outputs, checkpoints and changelogs."),
    KeySpec(
        "job.container.thread.pool.size",
        "0",
        "int>=0",
        "Threads running sync process/window; 0 runs them on the event loop thread.",
    ),
    KeySpec(
        "job.record.path",
        None,
        "str",
        "Record the schedule of each run (dispatches, async completions, timers) into this directory, for a "
        "replay (samza-nb run --replay DIR, LocalJobRunner(replay=DIR)); off when unset.",
    ),
    KeySpec(
        "job.logged.store.base.dir",
        "./.samza_nb/state",
        "str",
        "Directory of the job's local state and embedded checkpoints.",
    ),
    KeySpec(
        "job.systemstreampartition.grouper.factory",
        "group-by-partition",
        "choice",
        "How input partitions are grouped into tasks (or Samza's class names, "
        "org.apache.samza.container.grouper.stream.GroupByPartitionFactory and "
        "...GroupBySystemStreamPartitionFactory).",
        choices=GROUPER_CHOICES,
    ),
    KeySpec(
        "task.broadcast.inputs",
        None,
        "list",
        "Partitions every task reads: <system>.<stream>#<n> or <system>.<stream>#[<n>-<m>], comma-separated.",
    ),
    KeySpec(
        "job.coordinator.system",
        None,
        "str",
        "System of the coordinator stream (else job.default.system, else the durable log).",
    ),
    KeySpec("task.class", None, "class", "Dotted path of the task class (or zero-arg factory)."),
    KeySpec(
        "app.class", None, "class", "Dotted path of a StreamApplication class: run it instead of task.class."
    ),
    KeySpec(
        "app.name",
        None,
        "str",
        "The application's name (default job.name): names its intermediate streams and changelogs.",
    ),
    KeySpec("app.id", None, "str", "The application's instance id (default job.id), beside app.name."),
    KeySpec(
        "app.plan", None, "str", "The application's plan as JSON, written by the planner (never by hand)."
    ),
    KeySpec(
        "app.split.jobs",
        "false",
        "bool",
        "Run an application as one job per stage (cut at partition_by), job.name <app.name>-stage-<n>.",
    ),
    KeySpec("app.stage", None, "int>=0", "Run only this stage's job of a split application (0 = the first)."),
    KeySpec(
        "app.intermediate.serde",
        "pickle",
        "choice",
        "Serde of user messages on byte-carrying intermediate streams: pickle (any Python value, as sent) "
        "or json (readable by other consumers; tuples become lists, dict keys strings).",
        choices=("json", "pickle"),
    ),
    KeySpec(
        "job.intermediate.stream.partitions",
        None,
        "int>=1",
        "Partitions of intermediate streams (default: the largest source input's count).",
    ),
    KeySpec(
        "streams.<stream>.samza.system",
        None,
        "str",
        "System of an application's stream id (else job.default.system, else the durable log).",
    ),
    KeySpec(
        "streams.<stream>.samza.physical.name",
        None,
        "str",
        "Name of an application's stream id on its system (default: the id).",
    ),
    KeySpec("task.inputs", None, "list", "Comma-separated inputs, each <system>.<stream>."),
    KeySpec("task.max.concurrency", "1", "int>=1", "Messages in flight per task."),
    KeySpec("task.window.ms", "-1", "int", "Window timer period; <= 0 turns window off."),
    KeySpec("task.commit.ms", "60000", "int", "Commit timer period; <= 0 turns the timer off."),
    KeySpec(
        "task.callback.timeout.ms",
        "-1",
        "int",
        "A callback not completed within this fails the container; <= 0 waits forever.",
    ),
    KeySpec(
        "task.max.idle.ms",
        "10",
        "int>=0",
        "Accepted for Samza compatibility; the loop sleeps until a message, completion or timer wakes it.",
    ),
    KeySpec("task.shutdown.ms", "30000", "int>=0", "Graceful stop: how long in-flight messages may finish."),
    KeySpec("task.async.commit", "false", "bool", "Allow commit while messages are in flight."),
    KeySpec("task.poll.interval.ms", "50", "int>=0", "How long one consumer poll may wait for data."),
    KeySpec(
        "task.chooser.class",
        None,
        "class",
        "Dotted path of a chooser plug-in: a ChooserFactory (with from_config(config, bootstrap_metadata, "
        "inputs, offset_comparator)) or a MessageChooser class with a no-argument constructor.",
    ),
    KeySpec("task.consumer.batch.size", "0", "int>=0", "Messages in a row from one partition; 0 = off."),
    KeySpec(
        "task.chooser.time.aligned",
        "false",
        "bool",
        "Within a priority tier, choose the message with the smallest event timestamp.",
    ),
    KeySpec(
        "task.chooser.priorities.<system>.<stream>",
        None,
        "int",
        "Same as systems.<system>.streams.<stream>.samza.priority (the seed's form).",
    ),
    KeySpec(
        "job.container.count",
        "1",
        "int>=1",
        "Containers of the job: 1 runs in this process; N > 1 runs N processes under a job coordinator.",
    ),
    KeySpec(
        "cluster-manager.jobcoordinator.host",
        "127.0.0.1",
        "str",
        "Address the job coordinator's HTTP service binds to (loopback unless set).",
    ),
    KeySpec(
        "cluster-manager.jobcoordinator.url.port",
        "0",
        "int>=0",
        "Port of the job coordinator's HTTP service; 0 = any free port.",
    ),
    KeySpec(
        "cluster-manager.container.status.interval.ms",
        "250",
        "int>=1",
        "How often a container process reports its status and host to the job coordinator.",
    ),
    KeySpec(
        "cluster-manager.container.coordinator.timeout.ms",
        "30000",
        "int>=1",
        "A container process gives up when the job coordinator stays unreachable this long.",
    ),
    KeySpec(
        "job.coordinator.catchup.ms",
        "5000",
        "int",
        "How often the job coordinator reads new coordinator stream messages; <= 0 never.",
    ),
    KeySpec(
        "job.driver.lease.ms",
        "30000",
        "int>=1",
        "A running driver renews its claim on the job every third of this; a claim not renewed for this long "
        "(a driver on another host that died) is taken over by the next driver.",
    ),
    KeySpec(
        "systems.<system>.streams.<stream>.path",
        None,
        "str",
        "File system: the file of a stream (one message per line; offsets are line numbers).",
    ),
    KeySpec(
        "systems.<system>.output.dir",
        "./output",
        "str",
        "File system: where output streams without a path are written (<stream>.txt).",
    ),
    KeySpec("systems.<system>.bootstrap.servers", None, "list", "Kafka: brokers, host:port comma-separated."),
    KeySpec(
        "systems.<system>.consumer.<property>",
        None,
        "str",
        "Kafka: consumer settings under Kafka's names (unknown ones are a ConfigError).",
    ),
    KeySpec(
        "systems.<system>.producer.<property>",
        None,
        "str",
        "Kafka: producer settings under Kafka's names (acks defaults to all).",
    ),
    KeySpec(
        "systems.<system>.samza.broker.timeout.ms",
        "30000",
        "int>=1",
        "Kafka: bound on connecting, fetch silence, flush and metadata before a clear error.",
    ),
    KeySpec(
        "systems.<system>.samza.key.serde",
        None,
        "str",
        "Kafka, log: key serde at the boundary (bytes when unset; any serde name, as for stores).",
    ),
    KeySpec(
        "systems.<system>.samza.msg.serde",
        None,
        "str",
        "Kafka, log: message serde at the boundary (bytes when unset).",
    ),
    KeySpec(
        "systems.<system>.streams.<stream>.samza.key.serde", None, "str", "Kafka, log: per-stream key serde."
    ),
    KeySpec(
        "systems.<system>.streams.<stream>.samza.msg.serde",
        None,
        "str",
        "Kafka, log: per-stream message serde.",
    ),
    KeySpec(
        "systems.<system>.default.stream.replication.factor",
        "1",
        "int>=1",
        "Kafka: replication of topics samza_nb creates.",
    ),
    KeySpec(
        "task.checkpoint.replication.factor",
        None,
        "int>=1",
        "Kafka checkpoints: replication of the checkpoint topic (default: the system's).",
    ),
    KeySpec(
        "stores.<name>.factory",
        None,
        "class",
        "Store factory, e.g. samza_nb.storage.duckdb.DuckDBStoreFactory.",
    ),
    KeySpec(
        "stores.<name>.key.serde",
        None,
        "str",
        "Serde of the store's keys (string, json, bytes, int, long, double, pickle, a registered name, "
        "a Samza serde factory class or a serde class; bytes when unset).",
    ),
    KeySpec("stores.<name>.msg.serde", None, "str", "Serde of the store's values (bytes when unset)."),
    KeySpec(
        "stores.<name>.changelog",
        None,
        "str",
        "Changelog of the store: <system>.<stream> (or a stream on job.changelog.system).",
    ),
    KeySpec(
        "stores.<name>.write.batch.size",
        "100000",
        "int>=1",
        "Most changes held as objects before they are written down early (else once per commit).",
    ),
    KeySpec(
        "stores.<name>.object.cache.size",
        "1000",
        "int>=0",
        "Clean objects in the store's LRU cache (0 = no cache: every write is serialized at once).",
    ),
    KeySpec(
        "stores.<name>.preload.max.rows",
        "1000000",
        "int>=0",
        "Load a store partition into memory at start when it has at most this many rows (0 = never).",
    ),
    KeySpec(
        "stores.<name>.thread.safe",
        "false",
        "bool",
        "Lock every store call (on automatically with job.container.thread.pool.size > 0).",
    ),
    KeySpec("job.changelog.system", None, "str", "System of changelogs named without one."),
    KeySpec(
        "serializers.registry.<name>.class",
        None,
        "class",
        "A user serde (class or factory) registered under <name>.",
    ),
    KeySpec(
        "systems.<system>.inmemory.namespace",
        None,
        "str",
        "In-memory system: the broker namespace it reads and writes (default: the system name).",
    ),
    KeySpec(
        "task.checkpoint.factory",
        "samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactory",
        "class",
        "Checkpoint manager factory; the default keeps checkpoints in a DuckDB file.",
    ),
    KeySpec("task.checkpoint.system", None, "str", "System holding the checkpoint topic."),
    KeySpec(
        "task.checkpoint.write.versions",
        "1,2",
        "list",
        "Kafka and log checkpoints: Samza checkpoint versions written at each commit, in order (1, 2).",
    ),
    KeySpec(
        "task.checkpoint.read.versions",
        "1",
        "list",
        "Kafka and log checkpoints: versions read at start, preferred first (1, 2).",
    ),
    KeySpec(
        "task.live.checkpoint.max.age",
        "600000",
        "int>=0",
        "Kafka checkpoints: a less preferred version written this many ms after the held one wins.",
    ),
    KeySpec("systems.<system>.samza.factory", None, "class", "System factory of <system>."),
    KeySpec(
        "systems.<system>.samza.offset.default",
        "upcoming",
        "choice",
        "Where a partition without checkpoint starts: oldest, upcoming or newest; on the durable log and "
        "file systems also where one whose checkpoint is past the log's end resumes (unset: an error).",
        choices=_OFFSET_CHOICES,
    ),
    KeySpec(
        "systems.<system>.streams.<stream>.samza.offset.default",
        None,
        "choice",
        "Per-stream override of systems.<system>.samza.offset.default.",
        choices=_OFFSET_CHOICES,
    ),
    KeySpec(
        "systems.<system>.streams.<stream>.samza.reset.offset",
        "false",
        "bool",
        "Ignore the checkpoint of this stream and start from the offset default.",
    ),
    KeySpec(
        "systems.<system>.streams.<stream>.samza.priority",
        None,
        "int",
        "Chooser priority tier of the stream (higher first).",
    ),
    KeySpec(
        "systems.<system>.streams.<stream>.samza.bootstrap",
        "false",
        "bool",
        "Read the stream to its head before any other input.",
    ),
    KeySpec(
        "systems.<system>.streams.<stream>.partitions",
        "1",
        "int>=1",
        "Partitions of an output stream the system creates on first use (in-memory, Kafka, log).",
    ),
    KeySpec(
        "systems.<system>.log.dir",
        None,
        "str",
        "Durable log: directory of the streams (default <job.logged.store.base.dir>/log).",
    ),
    KeySpec(
        "task.watermark.idle.timeout.ms",
        "-1",
        "int",
        "Leave out of an intermediate partition's watermark the producers silent this long (<= 0: never).",
    ),
)
KEYS += SPARK_KEYS


@functools.lru_cache(maxsize=4096)
def spec_for(key: str) -> KeySpec | None:
    """The catalogue entry that ``key`` is an instance of, if any (the catalogue is fixed: remembered)."""
    for spec in KEYS:
        if spec.matches(key):
            return spec
    return None


def default_of(key: str) -> str | None:
    """The catalogue default of ``key`` (None when the key is unknown or has no default)."""
    spec = spec_for(key)
    return spec.default if spec is not None else None


def job_name(config: Mapping[str, str]) -> str:
    """The job's ``job.name``: as set in ``config``, else the catalogue default."""
    return _job_key(config, "job.name")


def job_id(config: Mapping[str, str]) -> str:
    """The job's ``job.id``: as set in ``config``, else the catalogue default."""
    return _job_key(config, "job.id")


def _job_key(config: Mapping[str, str], key: str) -> str:
    value = config.get(key)
    if value is not None:
        return value
    default = default_of(key)
    assert default is not None, f"the catalogue has a default for {key}"
    return default


def describe_key(spec: KeySpec) -> str:
    """One row of :func:`describe_keys`: the key, its default, its kind (with its choices) and meaning."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")

    default = "(unset)" if spec.default is None else f"`{spec.default}`" if spec.default else '""'
    kind = spec.kind + (": " + ", ".join(f"`{c}`" for c in spec.choices) if spec.choices else "")
    return f"| `{spec.pattern}` | {default} | {cell(kind)} | {cell(spec.description)} |"


def describe_keys(keys: tuple[KeySpec, ...] = KEYS, formatter: Callable[[KeySpec], str] | None = None) -> str:
    """A Markdown table of the catalogue, one row per key (the documentation's configuration reference is
    generated from it when the site is built)."""
    fmt = formatter or describe_key
    rows = [fmt(spec) for spec in keys]
    return "\n".join(["| key | default | kind | meaning |", "| --- | --- | --- | --- |", *rows]) + "\n"
