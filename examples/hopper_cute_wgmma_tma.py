"""CuTe's Hopper tutorial (``examples/cute/tutorial/hopper/wgmma_tma_sm90.cu``) on the emulator: the same
``gemm_device`` written the CuTe way on tmakit's host algebra (``make_tma_atom`` with ``GMMA::Layout_*_SW128_Atom``
smem layouts, a 3-stage TMA pipeline of full / empty mbarriers, ``partition_fragment``-style GMMA descriptors,
``warpgroup_arrive`` / ``gemm`` / ``warpgroup_commit_batch`` / ``warpgroup_wait``, ``axpby`` epilogue), for the
tutorial's TN and NT GEMMs, C compared with numpy. The program is ``tmakit.demo.sm90_cute_wgmma_tma``
(``gemm_device``: read it next to the tutorial); ``tmakit demo hopper-cute`` runs it too.
Run: ``python examples/hopper_cute_wgmma_tma.py``.
"""

from tmakit.demo.sm90_cute_wgmma_tma import main

if __name__ == "__main__":
    main()
