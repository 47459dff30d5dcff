"""A project's own module-level state, as many projects keep it: tools writing to a ledger
(and a counter) of the module, which `world: {object: ...}` saves and restores around runs."""

from __future__ import annotations

LEDGER: list[dict[str, object]] = []
CHARGES = 0


def charge(order_id: str, amount: float) -> str:
    """Charge an order."""
    global CHARGES
    LEDGER.append({"order": order_id, "amount": amount})
    CHARGES += 1
    return f"charged {amount} on {order_id}"
