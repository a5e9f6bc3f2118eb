"""Judge servers: the embedded CPU judges (``embedded.py``) and the GPU configs (vLLM, TGI)."""
