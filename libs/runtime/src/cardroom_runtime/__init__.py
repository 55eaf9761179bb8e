"""Settings, service discovery, embedded servers and migrations for processes and tests."""
