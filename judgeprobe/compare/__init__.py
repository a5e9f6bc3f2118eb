"""``judgeprobe compare``: runs on the same items compared row by row (docs/compare.md).

``entry.compare(runs, *, out)`` is the function (the command and the API call it); ``pairing``
loads the runs, finds their shared items and matches their rows, ``rows`` re-reads each card
row as document counts, ``cost`` prices a judgment and weighs a judge in human labels,
``published`` is compare.json's model, ``render`` the page.
"""
