"""Unknown config keys: near misses of catalogue keys are flagged with the key they resemble; keys the
catalogue cannot know (a plug-in's own) are not. A near miss, or keys under a misspelt system name, is an
error (check_key_spelling)."""

from __future__ import annotations

import pytest

from samza_nb.config import Config, check_key_spelling, unknown_key_warnings
from samza_nb.config.key_check import suggestion_for
from samza_nb.errors import ConfigError


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("task.max.concurency", "task.max.concurrency"),
        ("task.maxconcurrency", "task.max.concurrency"),
        ("job.nmae", "job.name"),
        ("task.windows.ms", "task.window.ms"),
        ("sytems.mem.samza.factory", "systems.mem.samza.factory"),
        ("systems.mem.samza.ofset.default", "systems.mem.samza.offset.default"),
        (
            "systems.mem.streams.page.views.samza.offsetdefault",
            "systems.mem.streams.page.views.samza.offset.default",
        ),
        ("systems.mem.stream.clicks.samza.priority", "systems.mem.streams.clicks.samza.priority"),
        ("systems.k.consumr.auto.offset.reset", "systems.k.consumer.auto.offset.reset"),
        ("stores.counts.factroy", "stores.counts.factory"),
        ("stores.counts.changlog", "stores.counts.changelog"),
        ("stores.my-store.msg.serdes", "stores.my-store.msg.serde"),
        ("task.chooser.priorites.mem.clicks", "task.chooser.priorities.mem.clicks"),
        ("serializers.registry.point.clas", "serializers.registry.point.class"),
        ("spark.mastr", "spark.master"),
    ],
)
def test_a_near_miss_of_a_catalogue_key_names_it(typo: str, meant: str) -> None:
    assert suggestion_for(typo) == meant
    assert unknown_key_warnings([typo]) == [f"unknown key {typo}: did you mean {meant}?"]


@pytest.mark.parametrize(
    "key",
    [
        # known keys, with names of the user's choosing in their placeholders
        "task.max.concurrency",
        "systems.my.system.samza.factory",
        "systems.mem.streams.page.views.samza.priority",
        "systems.k.consumer.max.poll.records",
        "spark.conf.spark.sql.shuffle.partitions",
        # keys of plug-ins the catalogue cannot know: a custom system's, a chooser's, a store factory's,
        # a user task's own; keys samza_nb does not read
        "systems.numbers.streams.ints.count",
        "task.chooser.weights.mem.clicks",
        "task.checkpoint.inmemory.namespace",
        "stores.counts.rocksdb.block.size",
        "stores.counts.ttl.ms",
        "systems.mysys.host",
        "systems.x.streams.t.custom.flag",
        "task.window.size",
        "task.greeting",
        "app.threshold",
        "job.factory.class",
        "metrics.reporters",
    ],
)
def test_known_keys_and_plug_in_keys_are_not_flagged(key: str) -> None:
    assert suggestion_for(key) is None
    assert unknown_key_warnings([key]) == []


def test_warnings_come_in_the_order_of_the_keys_and_the_config_itself_is_unchanged() -> None:
    config = Config({"task.comit.ms": "100", "job.name": "j", "task.max.concurency": "2"})
    assert unknown_key_warnings(config) == [
        "unknown key task.comit.ms: did you mean task.commit.ms?",
        "unknown key task.max.concurency: did you mean task.max.concurrency?",
    ]
    assert config.validate()["task.max.concurency"] == "2"


def test_real_samza_keys_outside_the_catalogue_are_not_typos() -> None:
    # job.non-logged.store.base.dir is one edit away from job.logged.store.base.dir, and real.
    assert suggestion_for("job.non-logged.store.base.dir") is None
    assert unknown_key_warnings(["job.non-logged.store.base.dir"], strict=True) == []


def test_no_suggestion_keeps_a_placeholder() -> None:
    suggestion = suggestion_for("spark.conf")
    assert suggestion is None or "<" not in suggestion


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("task.max.concurency", "task.max.concurrency"),
        ("systems.mem.samza.ofset.default", "systems.mem.samza.offset.default"),
    ],
)
def test_a_near_miss_is_an_error_naming_the_key_and_the_suggestion(typo: str, meant: str) -> None:
    config = Config({"job.name": "j", "myapp.greeting": "hi", typo: "1"})
    with pytest.raises(ConfigError) as caught:
        check_key_spelling(config)
    assert str(caught.value) == f"unknown key {typo}: did you mean {meant}?"
    assert caught.value.key == typo


def test_keys_far_from_every_known_key_pass() -> None:
    check_key_spelling(["myapp.greeting", "task.greeting", "systems.numbers.streams.ints.count", "job.name"])


MEM_FACTORY = "samza_nb.systems.inmemory.InMemorySystemFactory"


def test_keys_under_a_misspelt_system_name_name_the_system_with_a_factory() -> None:
    config = {
        "task.inputs": "mist.clicks",
        "systems.mist.samza.factory": MEM_FACTORY,
        "systems.mst.samza.offset.default": "oldest",
    }
    line = (
        "unknown key systems.mst.samza.offset.default: system 'mst' has no factory "
        "(systems.mst.samza.factory): did you mean systems.mist.samza.offset.default?"
    )
    assert unknown_key_warnings(config) == [line]
    with pytest.raises(ConfigError, match=r"did you mean systems\.mist\.samza\.offset\.default\?$") as caught:
        check_key_spelling(config)
    assert caught.value.key == "systems.mst.samza.offset.default"
    check_key_spelling(config, systems=False)  # keys that will join others: no system is complete yet


@pytest.mark.parametrize(
    "config",
    [
        # every system named has a factory
        {"systems.mist.samza.factory": MEM_FACTORY, "systems.mst.samza.factory": MEM_FACTORY},
        # a system without a factory, but far from every system that has one
        {"systems.mem.samza.factory": MEM_FACTORY, "systems.numbers.streams.ints.count": "5"},
        # the embedded durable log needs no factory
        {"systems.logs.samza.factory": MEM_FACTORY, "systems.log.log.dir": "/tmp/x"},
    ],
)
def test_system_names_without_a_near_miss_pass(config: dict[str, str]) -> None:
    check_key_spelling(config)


def test_a_key_misspelt_twice_is_told_once() -> None:
    config = {"systems.mist.samza.factory": MEM_FACTORY, "systems.mst.samza.ofset.default": "oldest"}
    assert unknown_key_warnings(config) == [
        "unknown key systems.mst.samza.ofset.default: did you mean systems.mst.samza.offset.default?"
    ]
