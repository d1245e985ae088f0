"""Seed 004 / CuTe's Blackwell tutorial 03 (``mma_tma_multicast_sm100``) on the emulator: 1-SM UMMAs (128x256x16),
TMA multicast of A along the cluster's N mode and of B along its M mode, ``umma_arrive_multicast``, the TMEM
epilogue. The program is ``tmakit.demo.sm100_mma_tma_multicast`` (``gemm_kernel``: read it next to the seed);
``tmakit demo blackwell`` runs it too. Run: ``python examples/blackwell_mma_tma_multicast.py``.
"""

from tmakit.demo.sm100_mma_tma_multicast import main

if __name__ == "__main__":
    main()
