"""``tmakit demo blackwell``: seed 004's Blackwell tutorials 03 and 04 (TMA multicast + tcgen05.mma, 1-SM and
2x1SM) on the emulator -- there is no Blackwell GPU backend; the sm_100a kernels are compiled, never run here."""

from __future__ import annotations


def run() -> None:
    from . import sm100_mma_tma_2sm, sm100_mma_tma_multicast

    for title, mod in (("03 mma_tma_multicast_sm100 (1-SM UMMA, TMA multicast)", sm100_mma_tma_multicast),
                       ("04 mma_tma_2sm_sm100 (2x1SM UMMA, 2-SM TMA)", sm100_mma_tma_2sm)):
        print(f"=== Blackwell tutorial {title}, on the emulator ===")
        mod.main()
        print()
    print("done: blackwell")
