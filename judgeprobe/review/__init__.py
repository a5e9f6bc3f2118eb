"""Human review of a run in the browser (``judgeprobe review RUN``).

Accept, reject or edit every generated text, and label blind preference pairs.

``texts`` finds what a run generated (one ``GeneratedText`` each), ``pairs`` the blind sample,
``server`` the page and its JSON API. The decisions and labels live in the run's review store
(``runs.review``), where the sweep, the metrics, the card and the report honour them.
"""
