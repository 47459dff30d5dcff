"""A small web shop's customer desk: the shop's database (orders, stock, refunds), built fresh
for every run from a scenario's `world:`, and the seven tools the agent serves customers with.
Each tool takes the shop as its `world` parameter, which the model never sees."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Shop:
    """Orders by id (customer, email, status, items, address, returned items), units in stock
    and the price of each product, and the refunds paid."""

    orders: dict[str, dict[str, Any]]
    stock: dict[str, int]
    prices: dict[str, float]
    refunds: list[dict[str, Any]] = field(default_factory=list)


def northwind(**changes: dict[str, Any]) -> Shop:
    """The shop the scenarios start from; each keyword updates that field's mapping (`data:
    {stock: {mug-blue: 0}}` in a scenario's `world:` sells the blue mugs out)."""
    shop = Shop(
        orders={
            "W1001": {"customer": "Ada Lovelace", "email": "ada@example.com",
                      "status": "pending", "items": ["kettle", "mug-red"],
                      "address": "12 Analytical Row, London"},
            "W1002": {"customer": "Ada Lovelace", "email": "ada@example.com",
                      "status": "shipped", "items": ["toaster"],
                      "address": "12 Analytical Row, London"},
            "W1003": {"customer": "Grace Hopper", "email": "grace@example.com",
                      "status": "delivered", "items": ["kettle", "mug-red"],
                      "address": "7 Cobol Lane, Arlington"},
            "W1004": {"customer": "Grace Hopper", "email": "grace@example.com",
                      "status": "pending", "items": ["lamp"],
                      "address": "7 Cobol Lane, Arlington"},
        },
        stock={"kettle": 3, "mug-red": 10, "mug-blue": 2, "toaster": 5, "lamp": 4},
        prices={"kettle": 39.0, "mug-red": 9.5, "mug-blue": 9.5, "toaster": 45.0, "lamp": 24.0},
    )
    for name, values in changes.items():
        getattr(shop, name).update(values)
    return shop


def _order(world: Shop, order_id: str) -> dict[str, Any]:
    order = world.orders.get(order_id)
    if order is None:
        raise ValueError(f"no order {order_id}")
    return order


def _pending(order_id: str, order: dict[str, Any], action: str) -> None:
    if order["status"] != "pending":
        raise ValueError(f"order {order_id} is {order['status']}: only a pending order can be "
                         f"{action}")


def _refund(world: Shop, order_id: str, amount: float, reason: str) -> None:
    world.refunds.append({"order": order_id, "amount": round(amount, 2), "reason": reason})


def find_order(world: Shop, order_id: str) -> str:
    """Look an order up: its status, items with prices, delivery address and customer."""
    order = _order(world, order_id)
    items = ", ".join(f"{item} ({world.prices[item]:.2f})" for item in order["items"])
    returned = f"; returned: {', '.join(order['returned'])}" if order.get("returned") else ""
    return (f"{order_id}: {order['status']}, {items}, to {order['address']}, for "
            f"{order['customer']}{returned}")


def list_orders(world: Shop, email: str) -> str:
    """The orders a customer placed, by the customer's email address."""
    found = [f"{order_id} ({order['status']})" for order_id, order in world.orders.items()
             if order["email"] == email]
    return ", ".join(found) if found else f"no orders for {email}"


def check_stock(world: Shop, product: str) -> str:
    """How many units of a product are in stock, and its price."""
    if product not in world.prices:
        raise ValueError(f"no product {product}")
    return f"{product}: {world.stock.get(product, 0)} in stock at {world.prices[product]:.2f}"


def cancel_order(world: Shop, order_id: str) -> str:
    """Cancel a pending order: its items go back to stock and its total is refunded."""
    order = _order(world, order_id)
    _pending(order_id, order, "cancelled")
    order["status"] = "cancelled"
    for item in order["items"]:
        world.stock[item] = world.stock.get(item, 0) + 1
    total = sum(world.prices[item] for item in order["items"])
    _refund(world, order_id, total, "cancelled")
    return f"{order_id} cancelled; {total:.2f} refunded"


def change_address(world: Shop, order_id: str, address: str) -> str:
    """Change the delivery address of a pending order."""
    order = _order(world, order_id)
    _pending(order_id, order, "redirected")
    order["address"] = address
    return f"{order_id} will be delivered to {address}"


def return_item(world: Shop, order_id: str, item: str) -> str:
    """Take back one item of a delivered order and refund its price."""
    order = _order(world, order_id)
    if order["status"] != "delivered":
        raise ValueError(f"order {order_id} is {order['status']}: only delivered items can be "
                         "returned")
    returned = order.setdefault("returned", [])
    if item not in order["items"] or item in returned:
        raise ValueError(f"order {order_id} has no {item} to return")
    returned.append(item)
    world.stock[item] = world.stock.get(item, 0) + 1
    _refund(world, order_id, world.prices[item], f"returned {item}")
    return f"{item} of {order_id} returned; {world.prices[item]:.2f} refunded"


def exchange_item(world: Shop, order_id: str, item: str, new_item: str) -> str:
    """Swap one item of a delivered order for another product of the same price, in stock."""
    order = _order(world, order_id)
    if order["status"] != "delivered" or item not in order["items"]:
        raise ValueError(f"order {order_id} has no delivered {item} to exchange")
    if world.prices.get(new_item) != world.prices[item]:
        raise ValueError(f"{new_item} does not cost the same as {item}")
    if world.stock.get(new_item, 0) < 1:
        raise ValueError(f"{new_item} is out of stock")
    order["items"] = [new_item if each == item else each for each in order["items"]]
    world.stock[new_item] -= 1
    world.stock[item] = world.stock.get(item, 0) + 1
    return f"{item} of {order_id} exchanged for {new_item}; it ships today"
