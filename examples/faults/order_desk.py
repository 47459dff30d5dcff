"""A support desk's three tools, each answering a JSON record (as a real API does); the
fault matrix of scenarios/order_support.yaml faults each of them."""

from __future__ import annotations

import json

_CUSTOMERS = {"ada@example.com": {"id": "C-17", "name": "Ada Lovelace", "tier": "gold"}}
_ORDERS = {"A-1001": {"order_id": "A-1001", "status": "shipped", "eta": "2026-11-05",
                      "carrier": "Parcelway"}}
_RETURNS = {"A-1001": {"order_id": "A-1001", "returnable": True, "until": "2026-12-05"}}


def find_customer(email: str) -> str:
    """Find a customer by e-mail address."""
    return json.dumps(_CUSTOMERS.get(email.strip().lower(), {"error": "no such customer"}))


def lookup_order(order_id: str) -> str:
    """Look up an order by its id (e.g. A-1001): its status, arrival date and carrier."""
    return json.dumps(_ORDERS.get(order_id.strip().upper(), {"error": "no such order"}))


def return_window(order_id: str) -> str:
    """Whether an order can be returned, and until when."""
    return json.dumps(_RETURNS.get(order_id.strip().upper(), {"error": "no such order"}))


def order_status(order_number: int) -> str:
    """The status of an order by its number (e.g. 1001): status, arrival date and carrier."""
    order = _ORDERS.get(f"A-{order_number}")
    if order is None:  # any other order is still being packed
        order = {"order_id": f"A-{order_number}", "status": "packing", "eta": "2026-11-12",
                 "carrier": "Parcelway"}
    return json.dumps(order)
