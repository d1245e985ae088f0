"""Plain-words explanations for hangs: what each parked CTA waits for and the likely cause."""

from __future__ import annotations


def barrier_hints(cta, b, parity: int) -> list[str]:
    """Likely causes of a wait on ``b`` (parity ``parity``) that can never complete."""
    hints = list(cta.lost.get(b.address, []))
    if not b.live:
        return hints + ["the barrier was never initialized"]
    if b.pending:
        hints.append(f"{b.pending} of {b.count} arrival(s) missing in phase {b.phase}")
    if b.expected > b.delivered:
        hints.append(f"{b.expected - b.delivered} tx bytes never arrived: expect_tx announced {b.expected} bytes but "
                     f"TMA delivered {b.delivered} (wrong expect_tx count, or a copy never issued?)")
    elif b.delivered > b.expected:
        hints.append(f"{b.delivered - b.expected} more tx bytes arrived than announced ({b.delivered} delivered, "
                     f"{b.expected} expected): expect_tx too small?")
    idle = b.pending == b.count and b.expected == 0 and b.delivered == 0
    if idle and b.phase > 0:
        hints.append(f"phase {b.phase} has seen no arrivals or transactions; phase {b.phase - 1} completed already — "
                     f"parity {parity & 1} waits for phase {b.phase}: wrong parity?")
    return hints


def describe_wait(cta, b, parity: int) -> str:
    head = f"wait_barrier(parity {parity & 1}) on {b.describe()}"
    return "\n".join([head] + [f"      - {h}" for h in barrier_hints(cta, b, parity)])


def describe_cluster_wait(cluster, cta) -> str:
    missing = [c for c in cluster.ctas if c.rank not in cluster.arrived | cluster.exited and c is not cta]
    return "cluster_sync: waiting at the cluster barrier for " + (", ".join(f"rank {c.rank}" for c in missing)
                                                                  or "no one")


def deadlock_message(cluster) -> str:
    lines = [f"Deadlock in cluster {cluster.cid}: every CTA is waiting and no TMA operation is in flight "
             "(the kernel would hang on the GPU)."]
    for cta in cluster.ctas:
        if cta.state == "blocked":
            lines.append(f"  {cta.label}: {cta.block.describe()}")
        else:
            lines.append(f"  {cta.label}: {cta.state}")
    if cluster.hazards:
        lines.append("  Races seen before the hang:")
        lines += [f"    - {h}" for h in cluster.hazards]
    return "\n".join(lines)
