"""Versioned explanation lexicons: cue words, stereotypes, acknowledgement, attack vocabulary.

Read by ``load.py``.
"""

from judgeprobe.text.lexicons.load import Lexicons, load_lexicons

__all__ = ["Lexicons", "load_lexicons"]
