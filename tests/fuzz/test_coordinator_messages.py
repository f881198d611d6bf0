"""Coordinator stream messages and the job model JSON: a value, or a SamzaError naming what is wrong; what a
job writes (messages, whole streams, job models) reads back the same."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from samza_nb.api.job_model import JobModel
from samza_nb.coordinator.bootstrap import (
    Bootstrapped,
    changelog_mapping_of,
    config_of,
    container_hosts_of,
    task_containers_of,
)
from samza_nb.coordinator.messages import (
    SET_CHANGELOG,
    SET_CONFIG,
    SET_CONTAINER_HOST,
    SET_TASK_CONTAINER,
    CoordinatorStreamMessage,
)
from tests.fuzz.budget import fuzz, parses, valid_inputs
from tests.fuzz.strategies import DEEP_LIST, DEEP_OBJECT, any_bytes, argv_text, json_values
from tests.fuzz.valid import coordinator_messages, job_models

TYPES = st.sampled_from([SET_CONFIG, SET_CHANGELOG, SET_CONTAINER_HOST, SET_TASK_CONTAINER, "other"])


def _views(messages: list[CoordinatorStreamMessage]) -> None:
    view = Bootstrapped()
    for message in messages:
        view.apply(message)
    parses(changelog_mapping_of, view)
    config_of(view)
    container_hosts_of(view)
    task_containers_of(view)


@fuzz
@given(key=any_bytes, value=st.one_of(st.none(), any_bytes))
@example(key=DEEP_LIST, value=None)
@example(key=b'[1,"set-config","k"]', value=DEEP_OBJECT)
def test_decode_bytes(key: bytes, value: bytes | None) -> None:
    message = parses(CoordinatorStreamMessage.decode, key, value, "coordinator stream offset 3")
    if message is not None:
        _views([message])


@fuzz
@given(
    messages=st.lists(
        st.tuples(TYPES, st.text(max_size=8), st.one_of(st.none(), json_values), json_values), max_size=6
    )
)
def test_decode_and_bootstrap(messages: list[tuple[str, str, object, object]]) -> None:
    """Well-formed keys with values of any shape, bootstrapped into the views the coordinator reads."""
    decoded = []
    for type_, name, values, timestamp in messages:
        key = json.dumps([1, type_, name]).encode()
        value = json.dumps({"host": "h", "values": values, "timestamp": timestamp}).encode()
        message = parses(CoordinatorStreamMessage.decode, key, value, "offset 3")
        if message is not None:
            decoded.append(message)
    _views(decoded)


@fuzz
@given(text=any_bytes)
@example(text=DEEP_LIST)
@example(text=DEEP_OBJECT)
def test_job_model_bytes(text: bytes) -> None:
    parses(JobModel.from_json, text)


task = st.dictionaries(
    st.sampled_from(["task-name", "system-stream-partitions", "changelog-partition", "task-mode"]),
    json_values,
    max_size=4,
)
container = st.fixed_dictionaries(
    {}, optional={"processor-id": json_values, "container-id": json_values, "tasks": st.dictionaries(
        st.text(max_size=8), st.one_of(task, json_values), max_size=3)}
)  # fmt: skip


@fuzz
@given(
    config=st.one_of(st.dictionaries(st.text(max_size=8), json_values, max_size=4), json_values),
    containers=st.one_of(st.dictionaries(st.text(max_size=4), container, max_size=3), json_values),
)
@example(config={}, containers={"0": {"processor-id": "0", "tasks": {"t": {"system-stream-partitions": 5}}}})
@example(
    config={},
    containers={
        "0": {
            "processor-id": "0",
            "tasks": {"t": {"system-stream-partitions": [{"system": [], "stream": "s", "partition": 0}]}},
        }
    },
)
def test_job_model_shapes(config: object, containers: object) -> None:
    """Job model documents with Samza's fields holding anything; what parses also survives a round trip."""
    text = json.dumps({"config": config, "containers": containers})
    model = parses(JobModel.from_json, text)
    if model is not None:
        assert JobModel.from_json(model.to_json()) == model


@fuzz
@given(
    type_=TYPES,
    key=argv_text,
    values=st.dictionaries(argv_text, st.one_of(json_values, argv_text), max_size=4),
)
@example(type_=SET_CONFIG, key="job.name", values={"value": "\udcff"})
def test_written_messages_read_back(type_: str, key: str, values: dict[str, object]) -> None:
    """What a job writes (config keys and values, task names: any text) reads back as the same message,
    or the write is refused with a SamzaError."""
    message = CoordinatorStreamMessage.create(type_, key, values, "fuzz")
    encoded = parses(message.encode)
    if encoded is not None:
        assert CoordinatorStreamMessage.decode(*encoded, "offset 0") == message


# -- valid inputs: what a job writes reads back ------------------------------------------------------


@valid_inputs
@given(message=coordinator_messages)
def test_valid_messages_round_trip(message: CoordinatorStreamMessage) -> None:
    """Any message (any text, any JSON values, a delete) decodes from its bytes as the same message, with
    the same stamp (host, user, source, time) unless it is a delete (a tombstone carries none)."""
    decoded = CoordinatorStreamMessage.decode(*message.encode(), "offset 0")
    assert decoded == message
    assert decoded.values == message.values
    if not message.is_delete:
        stamp = (message.host, message.username, message.source, message.timestamp)
        assert (decoded.host, decoded.username, decoded.source, decoded.timestamp) == stamp


@valid_inputs
@given(
    config=st.dictionaries(st.text(max_size=12), st.text(max_size=12), max_size=5),
    changelogs=st.dictionaries(st.text(max_size=12), st.integers(min_value=0, max_value=2**31), max_size=5),
    hosts=st.dictionaries(st.text(max_size=4), st.text(max_size=12), max_size=3),
    tasks=st.dictionaries(st.text(max_size=12), st.text(max_size=4), max_size=5),
)
def test_valid_streams_bootstrap(
    config: dict[str, str], changelogs: dict[str, int], hosts: dict[str, str], tasks: dict[str, str]
) -> None:
    """A coordinator stream as a job writes it (config, changelog partitions, hosts, task assignments),
    read back from its bytes, bootstraps to the same views."""
    written = [CoordinatorStreamMessage.set_config(k, v, "fuzz") for k, v in config.items()]
    written += [CoordinatorStreamMessage.set_changelog(k, v, "fuzz") for k, v in changelogs.items()]
    written += [CoordinatorStreamMessage.set_container_host(k, v, "fuzz") for k, v in hosts.items()]
    written += [CoordinatorStreamMessage.set_task_container(k, v, "fuzz") for k, v in tasks.items()]
    view = Bootstrapped()
    for offset, message in enumerate(written):
        view.apply(CoordinatorStreamMessage.decode(*message.encode(), f"offset {offset}"))
    assert config_of(view) == config
    assert changelog_mapping_of(view) == changelogs
    assert container_hosts_of(view) == hosts
    assert task_containers_of(view) == tasks


@valid_inputs
@given(model=job_models())
def test_valid_job_models_round_trip(model: JobModel) -> None:
    """A job model (containers, tasks, partitions, changelog partitions, modes, config) read back from the
    JSON it writes (as text and as bytes) is the same model, and writes the same JSON again."""
    text = model.to_json()
    assert JobModel.from_json(text) == model
    read = JobModel.from_json(text.encode("utf-8"))
    assert read == model
    assert read.to_json() == text
