"""Building the container's chooser: the DefaultChooser, or the factory ``task.chooser.class`` names, traced
when the dashboard explains choices (:func:`build_chooser`, what the container calls)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from samza_nb.chooser.base import MessageChooser, integer_offset_comparator
from samza_nb.chooser.batching import BatchingChooser
from samza_nb.chooser.default import DefaultChooser
from samza_nb.chooser.round_robin import RoundRobinChooser
from samza_nb.chooser.settings import CHOOSER_CLASS_KEY
from samza_nb.chooser.trace import TracingChooser
from samza_nb.config.plugins import import_dotted
from samza_nb.errors import ConfigError

if TYPE_CHECKING:
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.api.streams import SystemStream, SystemStreamPartition
    from samza_nb.chooser.base import OffsetComparator
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemAdmin


class ChooserFactory(Protocol):
    """Builds a container's whole chooser.

    Called as ``factory(config, bootstrap_metadata, inputs, offset_comparator)``.
    """

    def __call__(
        self,
        config: Mapping[str, str],
        bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata] | None,
        inputs: Iterable[SystemStream | str] | None,
        offset_comparator: OffsetComparator,
    ) -> MessageChooser: ...


def load_chooser_factory(dotted_path: str) -> ChooserFactory:
    """The chooser factory at ``dotted_path`` (``package.module.Name``), as a :class:`ChooserFactory`.

    What the path may name:

    - a class or object with ``from_config`` (like :class:`DefaultChooser`): called as
      ``from_config(config, bootstrap_metadata, inputs, offset_comparator)``;
    - a class with a ``get_chooser`` method (Samza's MessageChooserFactory style): instantiated without
      arguments, then ``get_chooser(config, bootstrap_metadata, inputs, offset_comparator)``;
    - a chooser class (it has ``update`` and ``choose``): instantiated without arguments;
    - any other callable: it is the factory itself.

    A path that cannot be imported, or names nothing usable, is a :class:`ConfigError` naming
    ``task.chooser.class`` and the path. A factory that returns something other than a MessageChooser
    raises a ConfigError when called.
    """
    target = import_dotted(dotted_path, CHOOSER_CLASS_KEY)
    build: Any
    if hasattr(target, "from_config"):
        build = target.from_config
    elif isinstance(target, type) and callable(getattr(target, "get_chooser", None)):
        instance = _instantiate(target, dotted_path)
        build = instance.get_chooser
    elif isinstance(target, type) and hasattr(target, "choose") and hasattr(target, "update"):
        # (The per-message choosers keep update/choose in slots: on the class they are descriptors.)
        cls = target

        def build(
            config: Mapping[str, str],
            bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata] | None,
            inputs: Iterable[SystemStream | str] | None,
            offset_comparator: OffsetComparator,
        ) -> Any:
            return _instantiate(cls, dotted_path)

    elif callable(target):
        build = target
    else:
        raise ConfigError(
            f"{CHOOSER_CLASS_KEY}={dotted_path!r} names {type(target).__name__}, not a chooser factory "
            "or chooser class",
            key=CHOOSER_CLASS_KEY,
        )

    def factory(
        config: Mapping[str, str],
        bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata] | None,
        inputs: Iterable[SystemStream | str] | None,
        offset_comparator: OffsetComparator,
    ) -> MessageChooser:
        chooser = build(config, bootstrap_metadata, inputs, offset_comparator)
        if not isinstance(chooser, MessageChooser):
            raise ConfigError(
                f"{CHOOSER_CLASS_KEY}={dotted_path!r} built {chooser!r}, which is not a MessageChooser "
                "(register, start, stop, update, choose)",
                key=CHOOSER_CLASS_KEY,
            )
        return chooser

    return factory


def create_chooser(
    config: Mapping[str, str],
    bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata] | None = None,
    inputs: Iterable[SystemStream | str] | None = None,
    offset_comparator: OffsetComparator = integer_offset_comparator,
) -> MessageChooser:
    """The container's chooser: built by the factory ``task.chooser.class`` names when it is set, else
    :meth:`DefaultChooser.from_config`."""
    path = config.get(CHOOSER_CLASS_KEY)
    if path is not None and path.strip():
        return load_chooser_factory(path.strip())(config, bootstrap_metadata, inputs, offset_comparator)
    return DefaultChooser.from_config(config, bootstrap_metadata, inputs, offset_comparator)


def build_chooser(
    config: Config,
    metadata: Mapping[SystemStreamPartition, SSPMetadata],
    inputs: Sequence[SystemStream],
    admins: Mapping[str, SystemAdmin],
    trace: bool = False,
) -> MessageChooser:
    """The chooser the config asks for, given the inputs' partition metadata (bootstrap needs each
    partition's newest and upcoming offsets). With ``trace`` every choice can be explained
    (``last_choice``); without it the chooser costs what its layers cost and no more."""
    chooser = create_chooser(config, metadata, inputs, _comparator(inputs, admins))
    if trace:
        if isinstance(chooser, DefaultChooser):
            chooser.trace_enabled = True
            return chooser
        return TracingChooser(chooser)
    if isinstance(chooser, DefaultChooser) and (
        type(chooser.composed) is RoundRobinChooser or isinstance(chooser.composed, BatchingChooser)
    ):
        # Untraced, the default chooser is its outermost layer; hand that out itself, so the container
        # can use its fast paths (round robin's ``take``, batching's ``choose_run``).
        return chooser.composed
    return chooser


def _comparator(inputs: Sequence[SystemStream], admins: Mapping[str, SystemAdmin]) -> OffsetComparator:
    """One offset order for the chooser: the inputs' system's, when they share one."""
    systems = {stream.system for stream in inputs}
    if len(systems) == 1:
        admin = admins.get(next(iter(systems)))
        if admin is not None:
            return admin.offset_comparator
    return integer_offset_comparator


def _instantiate(cls: type, dotted_path: str) -> Any:
    try:
        return cls()
    except TypeError as exc:
        raise ConfigError(
            f"{CHOOSER_CLASS_KEY}={dotted_path!r} cannot be instantiated without arguments: {exc}",
            key=CHOOSER_CLASS_KEY,
        ) from exc
