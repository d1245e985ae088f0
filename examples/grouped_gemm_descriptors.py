"""CUTLASS's ``57_hopper_grouped_gemm`` on the emulator: a ptr-array grouped GEMM whose persistent CTAs
rewrite their TMA descriptors per group (``tensormap.replace`` in shared memory, ``tensormap.cp_fenceproxy`` to a
global workspace, ``fence.proxy.tensormap`` acquire, ``prefetch.tensormap``), load A_g / B_g tiles through them,
bring the problem table in with a bulk copy (``SM90_BULK_COPY_AUTO``) and store C_g with TMA; the result matches
numpy per group (an empty group, K_g not a multiple of the tile). Then the two descriptor hazards the emulator
reports. The program is ``tmakit.demo.grouped_gemm``; ``tmakit demo grouped`` runs it too.
Run: ``python examples/grouped_gemm_descriptors.py``.
"""

from tmakit.demo.grouped_gemm import main

if __name__ == "__main__":
    main()
