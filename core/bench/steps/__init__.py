"""Step modules run inside the worker (standard library and torch only, loaded by path)."""
