"""Out-of-tree plug-ins for samza_nb: each shows one plug-in point, configured by dotted path.

- :mod:`.chooser`: a message chooser (``task.chooser.class``);
- :mod:`.system`: an input system (``systems.<name>.samza.factory``);
- :mod:`.serde`: a serde (``serializers.registry.<name>.class``).

Put the ``extensions`` directory on ``sys.path`` (or copy the package into your project) to use them.
"""
