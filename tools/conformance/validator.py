"""(a) Validator vs driver: random specs and the targeted encode sweeps, judged by ``validate()`` and the driver."""

from __future__ import annotations

import time

import numpy as np

from . import sweeps
from .common import _cc_arch, _diagnose, _jsonable, _tk, _try_encode
from .specs import _mutate, _rand_spec


def part_validator(args):
    tkc, tmm = _tk()
    from tmakit.tma import TmaDescriptorError

    try:
        from tmakit.tma.tensormap_rules import DOC_NE_HW_RULES, HW_DERIVED_RULES
    except ImportError:
        DOC_NE_HW_RULES, HW_DERIVED_RULES = [], []
    tkc.ensure_context()
    arch = _cc_arch()
    rng = np.random.default_rng(args.seed)
    footprints = {"accepted_by_driver": [], "rejected_by_driver": []}
    stats = {"cases": 0, "both_accept": 0, "both_reject": 0, "doc_ne_hw": 0, "disagree": 0, "unrepresentable": 0,
             "valid_fraction": 0.0}
    by_rule: dict[str, dict[str, int]] = {}
    disagreements, doc_cases = [], []
    t0 = time.time()
    while stats["cases"] < args.n_validator:
        spec = _rand_spec(rng, tmm)
        for _ in range(int(rng.choice([0, 0, 1, 1, 1, 2, 3]))):
            spec = _mutate(rng, spec)
        try:
            tm = tmm.TensorMap(**spec)
        except TmaDescriptorError:
            stats["unrepresentable"] += 1  # e.g. an enum outside the driver's; nothing to send to the driver
            continue
        rule = None
        try:
            tm.validate(arch)
        except TmaDescriptorError as e:
            rule = e.rule
        except Exception as e:  # a validator crash is a disagreement in itself
            rule = f"CRASH:{type(e).__name__}:{e}"
        try:
            tkc.encode_tensormap(tm, raw=True)
            drv, code = True, 0
        except tkc.CudaError as e:
            drv, code = False, e.code
        except (ValueError, OverflowError, TypeError):
            stats["unrepresentable"] += 1
            continue
        stats["cases"] += 1
        if rule is None and tm.mode == "tiled":
            fp_key = "accepted_by_driver" if drv else "rejected_by_driver"
            footprints[fp_key].append((tm.smem_bytes, tm.rank, tm.box_dim, _jsonable(tm.dtype)))
        r = by_rule.setdefault(rule or "(accepted)", {"driver_accepts": 0, "driver_rejects": 0})
        r["driver_accepts" if drv else "driver_rejects"] += 1
        val = rule is None
        if val and drv:
            stats["both_accept"] += 1
        elif not val and not drv:
            stats["both_reject"] += 1
        elif not val and drv and rule in DOC_NE_HW_RULES:
            stats["doc_ne_hw"] += 1
            if len(doc_cases) < 10:
                doc_cases.append({"rule": rule, "spec": _jsonable(spec)})
        else:
            stats["disagree"] += 1
            if len(disagreements) < 60:
                disagreements.append({"validator": rule or "accept", "driver": "accept" if drv else f"reject({code})",
                                      "smem_bytes": tm.smem_bytes if tm.mode == "tiled" else None,
                                      "fixed_by": _diagnose(tkc, tmm, tm) if not drv else [],
                                      "spec": _jsonable(spec)})
    stats["valid_fraction"] = stats["both_accept"] / max(1, stats["cases"])
    stats["agreement_outside_doc_ne_hw"] = 1 - stats["disagree"] / max(1, stats["cases"] - stats["doc_ne_hw"])
    stats["seconds"] = time.time() - t0
    acc = footprints["accepted_by_driver"]
    rej = footprints["rejected_by_driver"]
    fp = {"max_accepted_smem_bytes": max((a[0] for a in acc), default=None),
          "min_rejected_smem_bytes": min((a[0] for a in rej), default=None),
          "rejected_sample": sorted(rej)[:15], "accepted_largest": sorted(acc)[-10:]}
    return {"arch": arch, "doc_ne_hw_rules": list(DOC_NE_HW_RULES), "hw_derived_rules": list(HW_DERIVED_RULES),
            "stats": stats, "by_rule": by_rule,
            "footprints": fp, "sweeps": _encode_sweeps(tkc, tmm),
            "disagreements": disagreements, "doc_ne_hw_examples": doc_cases}


def _encode_sweeps(tkc, tmm):
    """Targeted encodes that isolate driver rules the random fuzz hints at."""
    DT = tmm.DataType
    base = tmm.TensorMap(dtype=DT.FLOAT32, global_dim=(1024, 1024), global_strides=(4096,), box_dim=(32, 8),
                         global_address=1 << 30)
    out = {}
    # rank 1
    r1 = tmm.TensorMap(dtype=DT.FLOAT32, global_dim=(1024,), global_strides=(), box_dim=(32,), global_address=1 << 30)
    out["rank1 f32 dim1024 box32"] = _try_encode(tkc, r1)
    out["rank1 f32 dim1024 box32 sw128"] = _try_encode(tkc, r1.replace(swizzle=3))
    big = (1024, 256, 256)
    for dims, box in (((32, 256, 8), (32, 256, 8)), (big, (32, 64, 32)), (big, (32, 8, 256)), (big, (32, 128, 8)),
                      (big, (32, 255, 5)), ((1024, 16, 16), (32, 16, 16)), ((64, 64, 64), (32, 64, 64))):
        t = tmm.TensorMap(dtype=DT.FLOAT32, global_dim=dims, global_strides=(dims[0] * 4, dims[0] * dims[1] * 4),
                          box_dim=box, global_address=1 << 30)
        out[f"3d f32 dims {dims} box {box}"] = _try_encode(tkc, t)
    out["rank2 f32 (1024,1) box (32,1)"] = _try_encode(tkc, base.replace(global_dim=(1024, 1), box_dim=(32, 1)))
    # outer box extent vs footprint
    for b1 in (8, 32, 64, 128, 256):
        out[f"2d f32 box (32,{b1}) = {128 * b1} B"] = _try_encode(tkc, base.replace(box_dim=(32, b1)))
    for b2 in (2, 4, 8, 16, 64):
        t = tmm.TensorMap(dtype=DT.FLOAT32, global_dim=(1024, 256, 256), global_strides=(4096, 4096 * 256),
                          box_dim=(32, 256, b2), global_address=1 << 30)
        out[f"3d f32 box (32,256,{b2}) = {128 * 256 * b2} B"] = _try_encode(tkc, t)
    # box larger than the tensor
    out["2d box (32,8) on dims (16,4)"] = _try_encode(tkc, base.replace(global_dim=(16, 4)))
    # address forms
    for a in (0, 256, 1 << 20, 1 << 40, (1 << 47) + 256, (1 << 48) + 256, (1 << 56) + 256):
        out[f"address {a:#x}"] = _try_encode(tkc, base.replace(global_address=a))
    return out


def part_driver_sweeps(args):
    """The targeted encode sweeps of ``sweeps.py`` (box-size thresholds per dtype/swizzle/row bytes,
    element strides, boxes larger than the tensor, interleave, im2col channels x pixels, addresses 2^k, packed types,
    the im2col corner/area grid), each judged by the validator too: agreement must be 100 % outside DOC≠HW."""
    from tmakit.tma import TmaDescriptorError
    from tmakit.tma.tensormap_rules import DOC_NE_HW_RULES

    _, tmm = _tk()
    args.explore_random = False
    raw = sweeps.part_encode(args)
    specs = [(p["tag"], p["spec"], p["r"]) for p in raw["points"]]
    for f in raw["families"]:
        for key, r in (("spec_max", 0), ("spec_min_rej", 1)):
            if key in f:
                specs.append((f"{f['tag']} ({'largest accepted' if r == 0 else 'smallest refused'})", f[key], r))
    stats = {"specs": len(specs), "agree": 0, "doc_ne_hw": 0, "disagree": 0}
    bad = []
    for tag, spec, r in specs:
        sp = dict(spec)
        for k, enum in (("dtype", tmm.DataType), ("interleave", tmm.Interleave), ("swizzle", tmm.SwizzleMode),
                        ("l2_promotion", tmm.L2Promotion), ("oob_fill", tmm.OobFill)):
            if isinstance(sp[k], str):
                sp[k] = enum[sp[k]]
        rule = None
        try:
            tmm.TensorMap(**sp).validate("sm_90")
        except TmaDescriptorError as e:
            rule = e.rule
        if (rule is None) == (r == 0):
            stats["agree"] += 1
        elif rule in DOC_NE_HW_RULES and r == 0:
            stats["doc_ne_hw"] += 1
        else:
            stats["disagree"] += 1
            if len(bad) < 20:
                bad.append({"tag": tag, "validator": rule or "accept", "driver": r})
    return {"stats": stats, "disagreements": bad,
            "families_max_last_box_dim": {f["tag"]: f["max"] for f in raw["families"]},
            "points": {p["tag"]: ("ok" if p["r"] == 0 else f"rej{p['r']}") for p in raw["points"]}}
