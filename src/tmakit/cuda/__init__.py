"""GPU runtime: NVRTC JIT, disk cache, module loading, launches, tensor-map encoding."""
