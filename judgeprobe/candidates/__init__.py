"""Candidate texts: how the texts judged are made or altered (style attacks for now)."""
