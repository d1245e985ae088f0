"""A Hopper GEMM on the emulator: TMA loads (128-byte swizzle) into a 3-stage ring with full / empty mbarriers,
``wgmma.mma_async`` m64n128k16 bf16 -> fp32 by two consumer warpgroups (one K-tile kept in flight with
``wgmma_wait_group(1)``), the accumulator fragments written to shared memory thread by thread and stored with TMA.
The program is ``tmakit.demo.sm90_tma_wgmma_gemm`` (``gemm_kernel``); ``tmakit demo hopper`` runs it too.
Run: ``python examples/hopper_tma_wgmma_gemm.py``.
"""

from tmakit.demo.sm90_tma_wgmma_gemm import main

if __name__ == "__main__":
    main()
