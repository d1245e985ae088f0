"""CuTe's layout algebra in Python (pure Python, no dependencies)."""

__all__: list[str] = []
