"""Building the container's chooser: the DefaultChooser, or the factory ``task.chooser.class`` names, traced
when the dashboard explains choices (:func:`build_chooser`, what the container calls)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

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


@runtime_checkable
class ChooserFactory(Protocol):
    """Plug-in shape 1 of ``task.chooser.class``: builds a container's whole chooser from its config.

    A class with a ``from_config`` classmethod fits (like :class:`DefaultChooser`), as does any object
    with that method.
    """

    def from_config(
        self,
        config: Mapping[str, str],
        bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata] | None,
        inputs: Iterable[SystemStream | str] | None,
        offset_comparator: OffsetComparator,
    ) -> MessageChooser:
        """The chooser for a container: ``config`` is the job's config, ``bootstrap_metadata`` the input
        partitions' metadata (None when unknown), ``inputs`` the input streams and ``offset_comparator``
        the order of their offsets."""
        ...


PLUG_IN_SHAPES = (
    "(1) a ChooserFactory: a class or object with from_config(config, bootstrap_metadata, inputs, "
    "offset_comparator) returning a MessageChooser, like samza_nb.chooser.DefaultChooser; or (2) a "
    "MessageChooser class (register, start, stop, update, choose) whose constructor takes no arguments"
)
"""What ``task.chooser.class`` may name, for error messages."""


def load_chooser_factory(dotted_path: str) -> ChooserFactory:
    """The chooser factory at ``dotted_path`` (``package.module.Name``). It may name one of two shapes:

    1. a :class:`ChooserFactory`: a class or object with ``from_config(config, bootstrap_metadata, inputs,
       offset_comparator)`` returning a MessageChooser (a chooser class with ``from_config`` is used
       through it);
    2. a :class:`MessageChooser` class whose constructor takes no arguments: instantiated once per
       container.

    A path that cannot be imported, or names anything else, is a :class:`ConfigError` naming
    ``task.chooser.class``, the path and the two shapes. The returned factory's ``from_config`` raises
    such a ConfigError when the chooser cannot be built or is not a MessageChooser.
    """
    target = import_dotted(dotted_path, CHOOSER_CLASS_KEY)
    if isinstance(target, ChooserFactory) and callable(target.from_config):
        return _CheckedFactory(dotted_path, target.from_config)
    if isinstance(target, type) and issubclass(target, MessageChooser):
        cls = target

        def construct(
            config: Mapping[str, str],
            bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata] | None,
            inputs: Iterable[SystemStream | str] | None,
            offset_comparator: OffsetComparator,
        ) -> Any:
            try:
                return cls()
            except TypeError as exc:
                raise ConfigError(
                    f"{CHOOSER_CLASS_KEY}={dotted_path!r} cannot be instantiated without arguments: {exc} "
                    "(a chooser class that needs arguments can build itself in a from_config classmethod)",
                    key=CHOOSER_CLASS_KEY,
                ) from exc

        return _CheckedFactory(dotted_path, construct)
    raise ConfigError(
        f"{CHOOSER_CLASS_KEY}={dotted_path!r} names {_describe(target)}, which is neither of the two chooser "
        f"plug-ins: {PLUG_IN_SHAPES}",
        key=CHOOSER_CLASS_KEY,
    )


def _describe(target: object) -> str:
    if isinstance(target, type):
        return f"class {target.__qualname__}"
    if inspect.isroutine(target):
        return f"function {target.__qualname__}"
    return f"{target!r} of type {type(target).__name__}"


class _CheckedFactory:
    """A :class:`ChooserFactory` that builds with ``build`` and refuses what is not a MessageChooser."""

    def __init__(self, dotted_path: str, build: Callable[..., Any]) -> None:
        self._path = dotted_path
        self._build = build

    def from_config(
        self,
        config: Mapping[str, str],
        bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata] | None,
        inputs: Iterable[SystemStream | str] | None,
        offset_comparator: OffsetComparator,
    ) -> MessageChooser:
        """The chooser ``task.chooser.class`` builds; a ConfigError naming the key when it is not a
        MessageChooser."""
        chooser = self._build(config, bootstrap_metadata, inputs, offset_comparator)
        if not isinstance(chooser, MessageChooser):
            raise ConfigError(
                f"{CHOOSER_CLASS_KEY}={self._path!r} built {chooser!r}, which is not a MessageChooser "
                "(register, start, stop, update, choose)",
                key=CHOOSER_CLASS_KEY,
            )
        return chooser

    def __repr__(self) -> str:
        return f"ChooserFactory({self._path!r})"


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
        factory = load_chooser_factory(path.strip())
        return factory.from_config(config, bootstrap_metadata, inputs, offset_comparator)
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
