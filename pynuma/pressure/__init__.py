"""Reading the host's pressure signals: memory, filesystems and pids as the eviction manager observes them."""
