"""Candidate texts: how the texts judged are made or altered.

extractive (sumy) and llm (engine) write summaries; attacks rewrites them by rule; preserve
checks rewrites; materials gathers one document's texts; subsets pairs them into items;
candidate_set writes the versioned Parquet set; assemble runs them all in order
(``make_candidate_set``), and ``python -m judgeprobe.candidates`` is its command line.
"""
