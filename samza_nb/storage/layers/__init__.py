"""The key-value store layers, outermost first: cached (object cache, batched writes) → serialized (serdes) →
logged (changelog), plus a lock for stores shared between threads. Each wraps a :class:`KeyValueStore`."""
