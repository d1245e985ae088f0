"""Scale factors of the FP8 GEMM (``gemm_fp8``): which scaling mode the scale shapes name, their strides, the shared
memory block scales take, and whether (and with which maps) the producer loads block scales by TMA instead of the
scale warp (kernel SCALE 4 / 5, gemm_scale.cuh "Block scales by TMA"; docs/GEMM.md)."""

from __future__ import annotations

from .gemm import GemmConfig, GemmError, smem_bytes, smem_limit

__all__ = ["BK", "block_fits", "block_scale_tma", "scale_maps", "scale_smem", "scaling_of"]

BK = 128  # K elements per slab: 128 fp8 = one 128-byte swizzle row (4 wgmma k32 steps); also the block-scale depth
_SCALE_CODE = {"tensor": 1, "row": 2, "block": 3}


def _name(dt) -> str:
    return str(dt).rsplit(".", 1)[-1]


def scale_smem(cfg: GemmConfig, code: int = 3) -> int:
    """Extra dynamic shared memory of a block-scaled kernel: per stage the scales of the tile's rows of A and two B
    scale blocks (gemm_scale.cuh): staged by the scale warp (kernel SCALE ``code`` 3; 16-byte aligned slots), or as
    TMA boxes (4: A's scales K-major, four K blocks per row; 5: M-major), 128-byte aligned slots after up to 128
    bytes of alignment."""
    if code == 3:
        return cfg.stages * (((cfg.bm + 2) * 4 + 15) // 16 * 16)
    a = (16 if code == 4 else 4) * cfg.bm
    return cfg.stages * (-(-a // 128) * 128 + 128) + 128


def block_fits(cfg: GemmConfig, code: int = 3) -> bool:
    """Whether a config has room for block scales (each stage's scales beside its operands in shared memory)."""
    return smem_bytes(cfg) + scale_smem(cfg, code) <= smem_limit(cfg)


def scaling_of(m: int, n: int, k: int, sa_shape: tuple, sb_shape: tuple) -> str:
    """The scaling mode the scale shapes name, or GemmError listing the accepted shapes."""
    kb, nb = -(-k // BK), -(-n // BK)
    na = 1
    for s in sa_shape:
        na *= s
    nbn = 1
    for s in sb_shape:
        nbn *= s
    if na == 1 and nbn == 1 and len(sa_shape) <= 2 and len(sb_shape) <= 2:
        return "tensor"
    if sa_shape == (m, 1) and sb_shape == (1, n):
        return "row"
    if sa_shape == (m, kb) and sb_shape == (nb, kb):
        return "block"
    raise GemmError(f"scale shapes {sa_shape} and {sb_shape} name no scaling mode for a {m}x{k} @ {k}x{n} product; "
                    f"use one element each (per tensor), ({m}, 1) and (1, {n}) (row-wise), or ({m}, {kb}) and "
                    f"({nb}, {kb}) (block-wise: 1x128 of A, 128x128 of B)")


def _scale_strides(scale_a, scale_b, scaling: str) -> tuple[int, int, int, int]:
    """(a_m, a_k, b_n, b_k): element strides of scale_a along rows / K blocks and of scale_b along columns (or N
    blocks) / K blocks; 0 where the mode has no such index."""
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if _name(s.dtype) != "float32":
            raise GemmError(f"{name} must be float32, got {_name(s.dtype)}; pass {name}.float()")
    if scaling == "tensor":
        return 0, 0, 0, 0
    (a_m, a_k), (b_0, b_1) = (tuple(int(x) for x in s.stride()) for s in (scale_a, scale_b))
    if scaling == "row":  # scale_a (M, 1), scale_b (1, N)
        return a_m, 0, b_1, 0
    return a_m, a_k, b_0, b_1  # scale_a (M, K blocks), scale_b (N blocks, K blocks)


def block_scale_tma(m: int, n: int, k: int, scale_a, scale_b, strides: tuple, config: GemmConfig) -> int:
    """The kernel SCALE that loads block scales by TMA for these scale tensors (4: A's scales K-major, 5: M-major),
    or 0 (the scale warp stages them): on CTA clusters and 64-row tiles, where the scale warp measured slower (H200:
    0.81x -> 0.90x of the per-tensor kernel at 1024x1024x65536 on 128x128 pairs, 0.98x -> 0.99x at 128x8192x8192;
    on single 128-row CTAs the scale warp was 1-1.5 % faster, docs/GEMM.md "Block scales by TMA"), with B's scales
    K-major, each tensor's pitch a multiple of 16 bytes and its address 16-byte aligned (TMA's global rules), and
    room for the larger slots (:func:`block_fits`)."""
    if config.cluster_size == 1 and config.bm == 128:
        return 0
    a_m, a_k, b_n, b_k = strides
    kb, nb = -(-k // BK), -(-n // BK)

    def pitch_ok(stride: int, rows: int, inner: int) -> bool:  # a row pitch TMA accepts (one row: any)
        return rows == 1 or (stride * 4 % 16 == 0 and stride >= inner)

    if int(scale_a.data_ptr()) % 16 or int(scale_b.data_ptr()) % 16:
        return 0
    if not ((b_k == 1 or kb == 1) and pitch_ok(b_n, nb, kb)):
        return 0
    if (a_k == 1 or kb == 1) and pitch_ok(a_m, m, kb):
        code = 4
    elif (a_m == 1 or m == 1) and pitch_ok(a_k, kb, m):
        code = 5
    else:
        return 0
    return code if block_fits(config, code) else 0


def scale_maps(p, sa_ptr: int, sb_ptr: int):
    """The (A scales, B scales) tensor maps of a ``gemm_fp8.Fp8Plan`` with ``scale_tma`` (gemm_scale.cuh "Block
    scales by TMA"): fp32, no swizzle; A's {4, BM} boxes over {K blocks, M} (4) or {BM, 1} over {M, K blocks} (5),
    B's {4, 2} over {K blocks, N blocks}. A dimension of one row gets a nominal pitch (never stepped)."""
    from tmakit.tma.tensormap import DataType, L2Promotion, TensorMap

    a_m, a_k, b_n, _ = p.scale_strides
    kb, nb = -(-p.k // BK), -(-p.n // BK)

    def tmap(ptr, dims, stride, box):
        pitch = stride * 4 if dims[1] > 1 else -(-dims[0] // 4) * 16
        return TensorMap(dtype=DataType.FLOAT32, global_dim=dims, global_strides=(pitch,), box_dim=box,
                         l2_promotion=L2Promotion.B128, global_address=ptr)

    if p.scale_tma == 4:
        ta = tmap(sa_ptr, (kb, p.m), a_m, (4, p.config.bm))
    else:
        ta = tmap(sa_ptr, (p.m, kb), a_k, (p.config.bm, 1))
    return ta, tmap(sb_ptr, (kb, nb), b_n, (4, 2))
