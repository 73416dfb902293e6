"""A tiny shop, the code under test of the demo suite.

It has one bug on purpose (see ``Cart.shipping``), so that the demo's report has a failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from decimal import ROUND_HALF_UP
from decimal import Decimal


FREE_SHIPPING_FROM = Decimal("50.00")
SHIPPING_FEE = Decimal("4.95")
COUPONS = {"SAVE10": Decimal("0.10"), "HALF": Decimal("0.50")}


class UnknownCoupon(ValueError):
    """The coupon code does not exist."""


@dataclass
class Cart:
    """Items (name -> (unit price, quantity)) and an optional coupon."""

    items: dict[str, tuple[Decimal, int]] = field(default_factory=dict)
    coupon: str | None = None

    def add(self, name: str, price: str, quantity: int = 1) -> None:
        """Add ``quantity`` units of ``name`` at ``price`` (a decimal string)."""
        if quantity < 1:
            raise ValueError(f"quantity must be at least 1, got {quantity}")
        old_price, old_quantity = self.items.get(name, (Decimal(price), 0))
        self.items[name] = (old_price, old_quantity + quantity)

    def apply_coupon(self, code: str) -> None:
        """Use a coupon; raises ``UnknownCoupon`` for a code that does not exist."""
        if code not in COUPONS:
            raise UnknownCoupon(code)
        self.coupon = code

    def subtotal(self) -> Decimal:
        """Sum of the items, after the coupon."""
        gross = sum((price * qty for price, qty in self.items.values()), Decimal("0"))
        if self.coupon:
            gross -= gross * COUPONS[self.coupon]
        return gross.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)

    def shipping(self) -> Decimal:
        """Free from 50.00 on. The bug: ``>`` should be ``>=``."""
        if not self.items or self.subtotal() > FREE_SHIPPING_FROM:
            return Decimal("0.00")
        return SHIPPING_FEE

    def total(self) -> Decimal:
        """What the customer pays."""
        return self.subtotal() + self.shipping()

    def receipt(self) -> str:
        """A plain-text receipt."""
        lines = [f"{qty} x {name} @ {price}" for name, (price, qty) in sorted(self.items.items())]
        lines.append(f"total {self.total()}")
        return "\n".join(lines)
