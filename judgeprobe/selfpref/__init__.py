"""Self-preference: does a judge prefer its own writing, and does being told so move it?"""
