"""Conformance of tmakit against a Hopper GPU: the validator against the driver, the emulator against the hardware
byte for byte, compute-sanitizer on the seed kernels, and the targeted probes behind each hardware-derived rule.

Run from the repository root: ``python3 -m tools.conformance --out DIR --commit SHA`` (see docs/CONFORMANCE.md).
Modules: ``common`` (helpers), ``specs`` (random maps), ``sweeps`` (targeted driver sweeps, TF32 patterns),
``validator`` (a), ``emulator`` (b), ``probes`` (single behaviours, compute-sanitizer), ``runtime`` (JIT and launch
numbers), ``hw_probes`` (im2col / interleave / emulator-choice probes, one process per case), ``__main__`` (driver).
"""
