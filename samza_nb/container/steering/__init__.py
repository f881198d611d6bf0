"""Steering a running container: pause, step, peek, resume, live knobs and hot swap, acting on the run loop
through its methods (:class:`~samza_nb.container.loop.run_loop.RunLoop`) and its
:class:`~samza_nb.container.loop.hooks.Steering` hook. ("Control" means in-band control messages only:
:mod:`samza_nb.control`.)"""
