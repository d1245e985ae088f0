"""Seed 004 / CuTe's Blackwell tutorial 04 (``mma_tma_2sm_sm100``) on the emulator: 2x1SM UMMAs (256x256x16) over
CTA pairs, 2-SM TMA multicast loads whose bytes complete on the pair leader, ``umma_arrive_multicast_2x1SM``. The
program is ``tmakit.demo.sm100_mma_tma_2sm`` (``gemm_kernel``); ``tmakit demo blackwell`` runs it too.
Run: ``python examples/blackwell_mma_tma_2sm.py``.
"""

from tmakit.demo.sm100_mma_tma_2sm import main

if __name__ == "__main__":
    main()
