"""A stand-in for a torch tensor with the attributes the GEMM plans read (shape, strides, address, dtype): plans
and routes are specified on the CPU without memory."""

from __future__ import annotations


class FakeTensor:
    def __init__(self, shape, strides, ptr=1 << 20, dtype=None, element_size=2):
        import torch

        self.shape, self._s, self._p = tuple(shape), tuple(strides), ptr
        self.dtype = dtype or torch.bfloat16
        self._e = element_size

    def dim(self):
        return len(self.shape)

    def stride(self, i=None):
        return self._s if i is None else self._s[i]

    def data_ptr(self):
        return self._p

    def element_size(self):
        return self._e
