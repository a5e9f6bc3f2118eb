"""The judge card.

Effects with paired intervals, exact tests with Benjamini–Hochberg q-values, minimum detectable
effects and a verdict per row (CLEAR, BIASED, UNDERPOWERED; SENSITIVE or INSENSITIVE for the
reading rows; STABLE, UNSTABLE for wording rows; STABLE, NOISY for repeat rows), one typed
``record.CardRow`` each, written as pages, card.csv and card.json
(``python -m judgeprobe.card RUN_DIR``).
"""

from judgeprobe import callable_command

callable_command(__name__)  # ``judgeprobe.card(...)`` calls the API's card
