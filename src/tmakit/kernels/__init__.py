"""CUDA kernels (.cu sources) and their Python entry points."""
