"""Event time on the dashboard and in ``%samza_time``: the views and their rendering (:mod:`.views`), and the
sampler that builds them from a running container's operator tasks (:mod:`.sampler`)."""
