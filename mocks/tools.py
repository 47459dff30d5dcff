"""The tool suite scenarios use (referenced as ``mocks.tools:<name>``). Deterministic."""

from __future__ import annotations

from agentkit.workflow import Context, HumanResponseEvent, InputRequiredEvent

_CAPITALS = {"france": "Paris", "japan": "Tokyo", "kenya": "Nairobi", "peru": "Lima",
             "canada": "Ottawa", "italy": "Rome"}
_WEATHER = {"paris": "18°C, light rain", "tokyo": "24°C, sunny", "nairobi": "22°C, cloudy",
            "lima": "19°C, overcast", "ottawa": "-3°C, snow", "rome": "21°C, clear"}
_POPULATION = {"paris": 2_102_650, "tokyo": 13_960_236, "nairobi": 4_397_073,
               "lima": 10_004_000, "ottawa": 1_017_449, "rome": 2_748_109}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def capital(country: str) -> str:
    """The capital city of a country."""
    try:
        return _CAPITALS[country.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown country: {country}") from None


def weather(city: str) -> str:
    """Today's weather in a city."""
    return _WEATHER.get(city.strip().lower(), "no data")


def population(city: str) -> int:
    """The population of a city."""
    try:
        return _POPULATION[city.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown city: {city}") from None


def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


def lookup_order(order_id: str) -> str:
    """Look up the status of a customer order by its id (e.g. A-1001)."""
    orders = {"A-1001": "shipped on 2026-11-02, arriving 2026-11-05",
              "A-1002": "processing", "A-1003": "cancelled by the customer"}
    return orders.get(order_id.strip().upper(), f"no order with id {order_id}")


def final_answer(text: str) -> str:
    """Give the final answer to the user verbatim (use with return_direct)."""
    return text


async def add_to_cart(ctx: Context, item: str) -> str:
    """Put an item in the shopping cart (kept in the workflow's shared state)."""
    state = await ctx.store.get("state")
    state["cart"] = [*state.get("cart", []), item]
    await ctx.store.set("state", state)
    return f"{item} is in the cart ({len(state['cart'])} item(s))"


async def ask_human(ctx: Context, question: str) -> str:
    """Ask the user a question and wait for the answer."""
    answer = await ctx.wait_for_event(HumanResponseEvent,
                                      waiter_event=InputRequiredEvent(prefix=question))
    return str(answer.response)
