"""The Python client SDK: play cardroom games over NATS."""
