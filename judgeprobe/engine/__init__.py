"""The async engine: turns a stream of requests into stored, validated results.

One module per concern:

- what is asked: ``request`` (a request and its content key), ``settings`` (a judge's and the
  engine's own settings), ``wire`` (the sampling fields each backend reads), ``structured``
  (how each backend wants a JSON schema);
- how it is sent: ``client`` (one endpoint: concurrency, rate cap, retries, re-asks),
  ``replicas`` (balancing over a judge's servers and their health), ``retry`` (what may be
  retried, and how long to wait), ``validate`` (reply parsing and re-asks), ``probe``
  (start-up checks and fingerprints), ``context`` (which first requests fit the context a
  judge serves), ``checks`` (a sweep's plan-time checks of sampling, seeds and context),
  ``tokenizer`` (token counts from the judge's own tokenizer), ``speed`` (the plan's short
  timed probe of a judge at its concurrency);
- where it is kept: ``store`` (the durable append-only result store), ``cached`` (a judgment's
  requests answered from the store when already final);
- how a sweep runs: ``runner`` (the streaming scheduler), ``progress`` (its progress bar),
  ``breaker`` (stopping a judge that cannot serve the run), ``batch`` (OpenAI batch files out
  and in), ``ray_rounds`` (the pending requests as Ray Data rounds).
"""
