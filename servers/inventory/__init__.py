"""inventory: a Shopify/ERP-like stock ledger — products with reorder levels, purchase orders, stock adjustments."""

from coworkenv.servers.inventory.models import TABLES
from coworkenv.servers.inventory.sensitive import SENSITIVE
from coworkenv.servers.inventory.tools import TOOLS
from coworkenv.servers.kit import Service

SERVICE = Service(
    name="inventory",
    title="Inventory",
    instructions=(
        "The company's stock of goods. Products are kept by SKU with units on hand and a reorder level; at or below "
        "it a product is low on stock. Restock by placing a purchase order (it commits money) and book the delivery "
        "with receive_purchase_order; every other change of stock is an adjustment with a reason. Amounts are in "
        "cents."
    ),
    tables=TABLES,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
