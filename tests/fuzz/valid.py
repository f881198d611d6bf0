"""Valid inputs, built from each format: what the fuzz properties' valid-input halves feed the parsers.

A "never crashes" property accepts a SamzaError for any input, so a parser that refused everything would
pass it; each has a partner that feeds values these strategies build the way the format's writer (or
Samza) would, and asserts they parse back to the same value. Text here is what UTF-8 can hold (hypothesis'
``st.text`` draws no lone surrogates).
"""

from __future__ import annotations

import re
import string
from typing import Any

from hypothesis import strategies as st

from samza_nb.api.checkpoint import Checkpoint
from samza_nb.api.job_model import ContainerModel, JobModel, TaskModel
from samza_nb.api.streams import END_OF_STREAM_OFFSET, SystemStream, SystemStreamPartition
from samza_nb.config.catalogue import KEYS, spec_for
from samza_nb.config.key_spec import KeySpec
from samza_nb.control.messages import EndOfStreamMessage, WatermarkMessage
from samza_nb.coordinator.messages import CoordinatorStreamMessage
from samza_nb.operators.plan import ApplicationPlan, StreamPlan

names = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=12)
"""Stream and store names as Kafka allows them."""
systems = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=8)
"""System names: one segment of a config key (``systems.<system>.*``), no dot."""
segments = st.from_regex(r"[a-z][a-z0-9_-]{0,7}", fullmatch=True)
"""One dotted-name segment (what a placeholder of a config key pattern stands for)."""
partitions = st.integers(min_value=0, max_value=2**31 - 1)
ssps = st.builds(SystemStreamPartition, systems, names, partitions)
offsets = st.text(min_size=1, max_size=20).filter(lambda text: text != END_OF_STREAM_OFFSET)
kafka_offsets = st.integers(min_value=0, max_value=2**63 - 1).map(str)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_documents: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=16,
)
"""JSON values (no NaN or infinity: JSON has none; string keys only)."""


# -- checkpoints ------------------------------------------------------------------------------------


@st.composite
def checkpoints(draw: st.DrawFn) -> tuple[Checkpoint, dict[str, SystemStream]]:
    """A task's checkpoint (inputs on ``in-*`` streams, stores with changelog partitions and offsets on
    ``cl-<store>`` streams) and the store -> changelog stream map its format must know."""
    inputs = draw(
        st.dictionaries(
            st.builds(SystemStreamPartition, systems, names.map("in-{}".format), partitions),
            offsets,
            max_size=4,
        )
    )
    stores = draw(st.lists(names, max_size=3, unique=True))
    changelogs = {store: SystemStream(draw(systems), f"cl-{store}") for store in stores}
    changelog_ssps = {
        store: SystemStreamPartition(stream.system, stream.stream, draw(partitions))
        for store, stream in changelogs.items()
    }
    changelog_offsets = {store: draw(kafka_offsets) for store in stores if draw(st.booleans())}
    return Checkpoint(inputs, changelog_offsets, changelog_ssps), changelogs


# -- config -----------------------------------------------------------------------------------------

_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""What ``str.splitlines`` (and so the ``.properties`` reader) ends a line at."""


def _one_line(text: str) -> bool:
    return not any(c in _LINE_BREAKS for c in text) and not text.endswith("\\")


property_keys = (
    st.text(min_size=1, max_size=20)
    .map(str.strip)
    .filter(lambda k: k and _one_line(k) and "=" not in k and ":" not in k and k[0] not in "#!")
)
property_values = st.text(max_size=30).map(str.strip).filter(_one_line)
"""Keys and values a ``.properties`` line holds as they are (one line, no leading or trailing blanks,
no separator in the key, no continuation backslash at the end)."""


def as_properties(values: dict[str, str]) -> str:
    """``values`` as ``.properties`` text, ``key = value`` a line (as ``%samza_config`` writes it)."""
    return "".join(f"{key} = {value}\n" for key, value in values.items())


def as_toml(values: dict[str, str]) -> str:
    """``values`` as TOML, one quoted dotted key a line with a basic string value."""
    return "".join(f"{_toml_string(key)} = {_toml_string(value)}\n" for key, value in values.items())


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\u{ord(m.group()):04x}", escaped) + '"'


def _key_of(spec: KeySpec) -> st.SearchStrategy[str]:
    parts = re.split(r"(<[a-z]+>)", spec.pattern)
    return st.tuples(*(segments if p.startswith("<") else st.just(p) for p in parts)).map("".join)


_BOOLS = [("true", True), ("false", False), ("yes", True), ("no", False), ("1", True), ("0", False)]
_BOOLS += [("on", True), ("off", False), ("TRUE", True), ("Off", False)]


REAL_CLASSES = [
    "samza_nb.systems.inmemory.InMemorySystemFactory",
    "samza_nb.storage.duckdb.DuckDBStoreFactory",
    "samza_nb.chooser.round_robin.RoundRobinChooser",
]


def _value_of(spec: KeySpec) -> st.SearchStrategy[tuple[str, Any]]:
    """(the value as config text holds it, the typed value it stands for: computed here, not by the
    catalogue)."""
    kind = spec.kind
    if kind == "int" or kind.startswith("int>="):
        least = -(2**40) if kind == "int" else int(kind[5:])
        return st.integers(min_value=least, max_value=2**40).map(lambda n: (str(n), n))
    if kind == "bool":
        return st.sampled_from(_BOOLS)
    if kind == "list":
        return st.lists(segments, max_size=3).map(lambda items: (",".join(items), items))
    if kind == "choice":
        return st.sampled_from(spec.choices).map(lambda choice: (choice, choice))
    if spec.pattern.endswith(".serde"):  # serde names are checked when the config is: registered ones
        return st.sampled_from(["string", "json", "bytes", "int", "long"]).map(lambda name: (name, name))
    if kind == "class":  # importable (class paths are checked when the config is): real classes
        return st.sampled_from(REAL_CLASSES).map(lambda path: (path, path))
    return property_values.filter(bool).map(lambda text: (text, text))


catalogued = (
    st.sampled_from(KEYS)
    .flatmap(lambda spec: st.tuples(st.just(spec), _key_of(spec), _value_of(spec)))
    .filter(lambda drawn: spec_for(drawn[1]) is drawn[0])
    .map(lambda drawn: (drawn[1], *drawn[2]))
)
"""(key, text, typed value): a catalogued key (its placeholders filled), a value of its type as config
text holds it, and the value it stands for."""
valid_configs = st.lists(catalogued, max_size=8, unique_by=lambda kv: kv[0])
"""Catalogued keys with values of their types (every one passes ``Config.validate``)."""


# -- coordinator stream, job model, application plan -------------------------------------------------

coordinator_messages = st.builds(
    CoordinatorStreamMessage,
    st.text(max_size=30),
    st.text(max_size=30),
    st.one_of(st.none(), st.dictionaries(st.text(max_size=10), json_documents, max_size=4)),
    st.text(max_size=12),
    st.text(max_size=12),
    st.text(max_size=12),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(min_value=-(2**31), max_value=2**31 - 1),
)
"""Coordinator stream messages with any text, any JSON values and deletes."""

tasks = st.builds(
    TaskModel,
    st.text(max_size=12),
    st.frozensets(ssps, max_size=4),
    st.integers(min_value=0, max_value=2**31 - 1),
    st.sampled_from(["Active", "Standby"]),
)


@st.composite
def job_models(draw: st.DrawFn) -> JobModel:
    """A job model: containers of tasks (each task in one container, its name its key) and a config."""
    all_tasks = draw(st.lists(tasks, max_size=6, unique_by=lambda t: t.name))
    ids = draw(st.lists(st.text(max_size=6), min_size=1, max_size=3, unique=True))
    containers: dict[str, dict[str, TaskModel]] = {cid: {} for cid in ids}
    for task in all_tasks:
        containers[draw(st.sampled_from(ids))][task.name] = task
    config = draw(st.dictionaries(st.text(max_size=20), st.text(max_size=20), max_size=5))
    return JobModel({cid: ContainerModel(cid, t) for cid, t in containers.items()}, config)


@st.composite
def application_plans(draw: st.DrawFn) -> ApplicationPlan:
    """A plan: streams by id (inputs, intermediates, outputs), stages of stream ids, and a stage or None."""
    ids = draw(st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=5, unique=True))
    streams = {
        stream_id: StreamPlan(
            stream_id,
            SystemStream(draw(systems), draw(names)),
            draw(st.integers(min_value=0, max_value=1024)),
            intermediate := draw(st.booleans()),
            draw(st.integers(min_value=1, max_value=64)) if intermediate else 0,
            not intermediate and draw(st.booleans()),
        )
        for stream_id in ids
    }
    readable = [s for s in ids if not streams[s].output] or ids
    stages = tuple(
        draw(st.lists(st.frozensets(st.sampled_from(readable), min_size=1), min_size=1, max_size=3))
    )
    stage = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=len(stages) - 1)))
    return ApplicationPlan(streams, stages, stage)


# -- serdes -----------------------------------------------------------------------------------------

SERDE_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=40),
    "json": json_documents,
    "bytes": st.binary(max_size=40),
    "int": st.integers(min_value=-(2**31), max_value=2**31 - 1),
    "long": st.integers(min_value=-(2**63), max_value=2**63 - 1),
    "double": st.floats(allow_nan=False),
    "pickle": st.recursive(
        st.one_of(
            json_scalars,
            st.binary(max_size=10),
            st.floats(allow_nan=False),
            st.complex_numbers(allow_nan=False),
        ),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.tuples(inner, inner),
            st.frozensets(st.integers(), max_size=3),
            st.dictionaries(st.one_of(st.integers(), st.text(max_size=5)), inner, max_size=3),
        ),
        max_leaves=10,
    ),
}
"""Per built-in serde, the values it encodes (a NaN double is checked apart: it is not equal to itself)."""

control_messages = st.one_of(
    st.builds(EndOfStreamMessage, st.one_of(st.none(), st.text(max_size=12)), st.integers(-(2**31), 2**31)),
    st.builds(
        WatermarkMessage,
        st.one_of(st.none(), st.text(max_size=12)),
        st.integers(-(2**31), 2**31),
        timestamp=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    ),
)
"""End-of-stream and watermark messages from any task (or none)."""

__all__ = [
    "SERDE_VALUES",
    "application_plans",
    "as_properties",
    "as_toml",
    "catalogued",
    "checkpoints",
    "control_messages",
    "coordinator_messages",
    "job_models",
    "json_documents",
    "property_keys",
    "property_values",
    "valid_configs",
]
