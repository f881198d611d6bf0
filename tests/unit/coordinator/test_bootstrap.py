"""Bootstrapping: Samza's TestCoordinatorStreamSystemConsumer scenarios."""

from __future__ import annotations

import pytest

from samza_nb.coordinator import CoordinatorStreamMessage, bootstrap
from samza_nb.coordinator.bootstrap import (
    Bootstrapped,
    changelog_mapping_of,
    config_of,
    container_hosts_of,
    task_containers_of,
)
from samza_nb.coordinator.messages import SET_CHANGELOG, SET_CONFIG
from samza_nb.errors import SamzaError

Msg = CoordinatorStreamMessage


def view_of(*messages: Msg) -> Bootstrapped:
    view = Bootstrapped()
    for message in messages:
        view.apply(message)
    return view


def test_a_rewritten_value_moves_to_the_end() -> None:
    # testOrderKeyRewrite: key1=value1, key1=value2, key1=value1 -> [value2, value1]; config key1=value1.
    set1 = Msg.set_config("key1", "value1", "source")
    set2 = Msg.set_config("key1", "value2", "source")
    set3 = Msg.set_config("key1", "value1", "source")
    result = bootstrap([set1, set2, set3])
    assert result == [set2, set3]
    assert result[1] is set3
    view = view_of(set1, set2, set3)
    assert view.messages(SET_CONFIG) == [set2, set3]
    assert config_of(view) == {"key1": "value1"}


def test_the_last_value_per_key_wins() -> None:
    view = view_of(Msg.set_config("key1", "value1", "s"), Msg.set_config("key1", "value2", "s"))
    assert config_of(view) == {"key1": "value2"}


def test_a_delete_removes_the_key() -> None:
    # testCoordinatorStreamSystemConsumer: job.name set, job.id set, job.name deleted -> {job.id: 1234}.
    view = view_of(
        Msg.set_config("job.name", "my-job-name", "test"),
        Msg.set_config("job.id", "1234", "test"),
        Msg.delete(SET_CONFIG, "job.name", "test"),
    )
    assert config_of(view) == {"job.id": "1234"}
    assert [m.key for m in view.messages()] == ["job.id"]


def test_a_deleted_key_set_again_comes_back_at_the_end() -> None:
    a, b = Msg.set_config("a", "1", "s"), Msg.set_config("b", "2", "s")
    result = bootstrap([a, b, Msg.delete(SET_CONFIG, "a", "s"), Msg.set_config("a", "1", "s")])
    assert result == [b, a]


def test_a_delete_of_one_type_keeps_the_same_key_of_another() -> None:
    config = Msg.set_config("Partition 0", "x", "s")
    changelog = Msg.set_changelog("Partition 0", 3, "s")
    view = view_of(config, changelog, Msg.delete(SET_CHANGELOG, "Partition 0", "s"))
    assert view.messages() == [config]
    assert changelog_mapping_of(view) == {}


def test_typed_views() -> None:
    view = view_of(
        Msg.set_changelog("Partition 0", 0, "s"),
        Msg.set_changelog("Partition 1", 1, "s"),
        Msg.set_changelog("Partition 0", 5, "s"),
        Msg.set_container_host("0", "alpha", "s"),
        Msg.set_container_host("1", "beta", "s"),
        Msg.set_task_container("Partition 0", "1", "s"),
    )
    assert changelog_mapping_of(view) == {"Partition 0": 5, "Partition 1": 1}
    assert container_hosts_of(view) == {"0": "alpha", "1": "beta"}
    assert task_containers_of(view) == {"Partition 0": "1"}
    assert [m.key for m in view.messages("set-container-host-assignment")] == ["0", "1"]


def test_a_changelog_partition_that_is_no_integer_is_named() -> None:
    view = view_of(Msg("set-changelog", "Partition 4", {"Partition": "four"}))
    with pytest.raises(SamzaError, match=r"Partition 4.*'four'"):
        changelog_mapping_of(view)


def test_views_list_keys_in_the_order_of_their_last_write() -> None:
    view = view_of(
        Msg.set_config("a", "1", "s"), Msg.set_config("b", "2", "s"), Msg.set_config("a", "3", "s")
    )
    assert list(config_of(view).items()) == [("b", "2"), ("a", "3")]
