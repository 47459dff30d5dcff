"""A small booking desk: the world its tools act on, built fresh for every run (`world:` in
the scenarios), and the tools, which receive it through their `world` parameter."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Desk:
    """Seats of one flight (seat -> free, held or sold), the holds and the payments made."""

    seats: dict[str, str]
    price: float = 120.0
    holds: dict[str, str] = field(default_factory=dict)
    payments: list[dict[str, object]] = field(default_factory=list)


def hold_seat(world: Desk, seat: str) -> str:
    """Hold a free seat; returns the hold's id."""
    if world.seats.get(seat) != "free":
        raise ValueError(f"seat {seat} is not free")
    world.seats[seat] = "held"
    hold_id = f"H-{seat}"
    world.holds[hold_id] = seat
    return f"{hold_id}: seat {seat} held, {world.price:.0f} EUR to pay"


def pay(world: Desk, hold_id: str) -> str:
    """Pay for a held seat, which is then sold."""
    seat = world.holds.pop(hold_id, None)
    if seat is None:
        raise ValueError(f"no hold {hold_id}")
    world.seats[seat] = "sold"
    world.payments.append({"hold": hold_id, "amount": world.price})
    return f"paid {world.price:.0f} EUR for seat {seat}"
