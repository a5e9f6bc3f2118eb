"""The async engine: turns a stream of requests into stored, validated results.

One module per concern: ``request`` (what is asked and its content key), ``structured``
(how each backend wants a JSON schema), ``retry`` (what may be retried, and how long to wait),
``validate`` (reply parsing and re-asks), ``client`` (one endpoint: concurrency, rate cap,
retries, re-asks), ``probe`` (start-up checks and fingerprints), ``store`` (the durable
append-only result store), ``progress`` and ``runner`` (the streaming scheduler).
"""
