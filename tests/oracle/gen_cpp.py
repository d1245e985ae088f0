"""Translate the oracle cases (Python expressions in tmakit's spelling) into CuTe C++ (cute_oracle.cpp).

Spelling shared by both sides (see tests/test_layout_oracle.py for the Python meaning):
  ``_16`` static int, ``16`` dynamic int, ``(a, b)`` tuple, ``_`` underscore, ``None`` CuTe's ``X``,
  ``L(shape[, stride])`` make_layout, ``E(i, ...)`` scaled basis, ``Sw(B, M, S)`` Swizzle,
  ``get(x, i, ...)`` / ``mode(x, i)`` / ``size(x, i)`` ... template-indexed accessors, ``call(f, args...)`` f(args...),
  ``group_modes(x, b, e)``, ``take(x, b, e)``, ``select(x, i, ...)``, ``append_n(x, [y,] n)``, ``upcast(x, n)``,
  ``downcast(x, n)``, ``insert(t, x, n)`` ... (TEMPLATED: the function arguments first, then the template
  integers), ``recast_layout(x, uint8_t, half_t)`` / ``recast(tensor, uint32_t)`` (element types from TYPES);
  ``with_shape(x, ...)``, ``compose(x, ...)`` and ``tile(x, ...)`` are the member functions ``x.with_shape(...)`` ...;
  ``lambda a, b: a * b`` a generic C++ lambda; ``arr(6, 3)`` a ``cute::array<int, 2>``; ``make_smem_ptr(half_t, 256)``
  a smem pointer to address 256; ``get_swizzle(x)`` CuTe's ``get_swizzle_t<decltype(x)>{}``; ``MMA_Atom(Op())``
  ``MMA_Atom<Op>{}``; ``plus()`` (and the other FUNCTORS) ``plus{}``.
A case whose expression starts with ``print_layout(``, ``print_tensor(``, ``print_latex(`` or ``print_latex_tv(`` prints
a table (or a picture) instead of a value.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import CASES  # noqa: E402

INDEXED = {"get": "get", "mode": "layout", "size": "size", "shape": "shape", "stride": "stride", "rank": "rank",
           "depth": "depth", "cosize": "cosize", "tile_size": "tile_size"}
# name: (CuTe's name, number of leading function arguments; the rest are template integers; -1: all but the last)
TEMPLATED = {"group_modes": ("group", 1), "take": ("take", 1), "select": ("select", 1), "upcast": ("upcast", 1),
             "downcast": ("downcast", 1), "group": ("group", 1), "insert": ("insert", 2), "remove": ("remove", 1),
             "replace": ("replace", 2), "tuple_repeat": ("tuple_repeat", 1), "repeat": ("repeat", 1),
             "make_int_tuple": ("make_int_tuple", 3), "append_n": ("append", -1), "prepend_n": ("prepend", -1)}
TYPES = ("uint8_t", "uint16_t", "uint32_t", "uint64_t", "uint128_t", "half_t", "float_e2m1_t", "float_e2m3_t")
METHODS = ("with_shape", "compose", "tile",  # ``with_shape(x, s)`` is CuTe's ``x.with_shape(s)``
           # TiledCopy / ThrCopy / ThrMMA members (``layout(t)`` is ``t.layout()``)
           "get_slice", "partition_S", "partition_D", "retile_S", "retile_D", "get_layoutS_TV", "get_layoutD_TV",
           "partition_A", "partition_B", "partition_C", "partition_fragment_A", "partition_fragment_B",
           "partition_fragment_C", "layout")
# ``Copy_Atom(Op(targs...), T)`` is ``Copy_Atom<Op<targs...>, T>{}``; an op with no arguments is its bare type name
COPY_OPS = ("UniversalCopy", "AutoVectorizingCopyWithAssumedAlignment", "AutoVectorizingCopy", "DefaultCopy",
            "SM80_CP_ASYNC_CACHEALWAYS", "SM80_CP_ASYNC_CACHEGLOBAL")
# CuTe's function objects (algorithm/functional.hpp): ``plus()`` is ``plus{}`` (``plus()`` would parse as a type)
FUNCTORS = ("identity", "negate", "plus", "minus", "multiplies", "divides", "modulus", "max_fn", "min_fn", "abs_fn")
TAGS = {"LayoutLeft": "LayoutLeft{}", "LayoutRight": "LayoutRight{}", "_": "_"}
# cases that print a table or picture themselves
PRINTS = ("print_layout(", "print_tensor(", "print_latex(", "print_latex_tv(")
_BOUND: list[set] = []  # the parameters of the lambdas being translated


def cpp(node) -> str:
    if isinstance(node, ast.Expression):
        return cpp(node.body)
    if isinstance(node, ast.Constant):
        if node.value is None:
            return "X{}"
        if isinstance(node.value, bool) or not isinstance(node.value, int):
            raise ValueError(f"unsupported constant {node.value!r}")
        return str(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return f"(-{cpp(node.operand)})"
    if isinstance(node, ast.Name):
        if any(node.id in names for names in _BOUND):
            return node.id
        if re.fullmatch(r"_\d+", node.id):
            return f"Int<{node.id[1:]}>{{}}"
        if re.fullmatch(r"_m\d+", node.id):
            return f"Int<-{node.id[2:]}>{{}}"
        if node.id in TAGS:
            return TAGS[node.id]
        raise ValueError(f"unknown name {node.id}")
    if isinstance(node, ast.Tuple):
        return "cute::make_tuple(" + ", ".join(cpp(e) for e in node.elts) + ")"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub)):
        op = {ast.Mult: "*", ast.Add: "+", ast.Sub: "-"}[type(node.op)]
        return f"({cpp(node.left)} {op} {cpp(node.right)})"
    if isinstance(node, ast.Lambda):
        names = [a.arg for a in node.args.args]
        _BOUND.append(set(names))
        try:
            body = cpp(node.body)
        finally:
            _BOUND.pop()
        return "[&](" + ", ".join(f"auto const& {n}" for n in names) + f") {{ return {body}; }}"
    if isinstance(node, ast.Call):
        name = node.func.id
        args = node.args
        ints = lambda xs: ",".join(str(ast.literal_eval(a)) for a in xs)  # noqa: E731
        if name == "L":
            return "make_layout(" + ", ".join(cpp(a) for a in args) + ")"
        if name == "E":
            return f"E<{ints(args)}>{{}}"
        if name == "Sw":
            return f"Swizzle<{ints(args)}>{{}}"
        if name == "call":
            return f"({cpp(args[0])})(" + ", ".join(cpp(a) for a in args[1:]) + ")"
        if name in INDEXED and len(args) > 1:
            return f"{INDEXED[name]}<{ints(args[1:])}>({cpp(args[0])})"
        if name in TEMPLATED:
            cname, k = TEMPLATED[name]
            k = len(args) - 1 if k < 0 else k
            return f"{cname}<{ints(args[k:])}>(" + ", ".join(cpp(a) for a in args[:k]) + ")"
        if name == "arr":
            return f"cute::array<int, {len(args)}>{{" + ", ".join(cpp(a) for a in args) + "}"
        if name == "make_smem_ptr":  # make_smem_ptr(T, address)
            return f"make_smem_ptr(reinterpret_cast<{_type(args[0])}*>(uintptr_t({cpp(args[1])})))"
        if name == "recast":  # recast(tensor, NewType)
            return f"recast<{_type(args[1])}>({cpp(args[0])})"
        if name == "Copy_Atom":  # Copy_Atom(Op(...), ValType)
            return f"Copy_Atom<{_op_type(args[0])}, {_type(args[1])}>{{}}"
        if name in FUNCTORS and not args:
            return f"{name}{{}}"
        if name == "MMA_Atom":  # MMA_Atom(Op()): CuTe's MMA_Atom<Op>{}
            return f"MMA_Atom<{_op_type(args[0])}>{{}}"
        if name == "get_swizzle":
            return f"get_swizzle_t<decltype({cpp(args[0])})>{{}}"
        if name in METHODS:
            return f"({cpp(args[0])}).{name}(" + ", ".join(cpp(a) for a in args[1:]) + ")"
        if name == "recast_layout":  # recast_layout(x, OldType, NewType): the element types are template arguments
            types = [a.id for a in args[1:]]
            if len(types) != 2 or any(t not in TYPES for t in types):
                raise ValueError(f"recast_layout takes two of {TYPES}")
            return f"recast_layout<{', '.join(types)}>({cpp(args[0])})"
        return f"{name}(" + ", ".join(cpp(a) for a in args) + ")"
    raise ValueError(f"unsupported syntax: {ast.dump(node)}")


def _op_type(node) -> str:
    """The C++ type of a copy op spelled ``Op(template args...)``: element types or integers."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"expected a copy op such as UniversalCopy(uint32_t), got {ast.dump(node)}")
    targs = [a.id if isinstance(a, ast.Name) else str(ast.literal_eval(a)) for a in node.args]
    return node.func.id + (f"<{', '.join(targs)}>" if targs else "")


def _type(node) -> str:
    if not isinstance(node, ast.Name) or node.id not in TYPES:
        raise ValueError(f"expected one of {TYPES}, got {ast.dump(node)}")
    return node.id


def case_cpp(expr: str) -> str:
    body = cpp(ast.parse(expr, mode="eval"))
    label = f'printf(">>> %s\\n", R"__({expr})__");'
    if expr.startswith(PRINTS):
        return f"  {{ {label} {body}; }}"
    return f'  {{ {label} print({body}); printf("\\n"); }}'


def main(out: Path, exclude=()) -> None:
    """Write the C++ of every case except those in ``exclude`` (cases CuTe refuses to compile)."""
    chunks, per = [], 40
    cases = [e for e in CASES if e not in set(exclude)]
    for k in range(0, len(cases), per):
        body = "\n".join(case_cpp(e) for e in cases[k:k + per])
        chunks.append(f"void cases_{k // per}() {{\n{body}\n}}\n")
    calls = "\n".join(f"  cases_{i}();" for i in range(len(chunks)))
    out.write_text(
        "// Generated by tests/oracle/gen_cpp.py from tests/oracle/cases.py -- do not edit.\n"
        "// Prints each case as '>>> expr' followed by what CuTe's print() / print_layout() shows.\n"
        "#include <cstdio>\n#include <cute/tensor.hpp>\n#include <cute/util/print_tensor.hpp>\n"
        "#include <cute/util/print_latex.hpp>\n"
        "#include <cute/atom/copy_atom.hpp>\n#include <cute/atom/mma_atom.hpp>\n\n"
        "using namespace cute;\n\n" + "\n".join(chunks) + f"\nint main() {{\n{calls}\n  return 0;\n}}\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "cute_oracle.cpp")
