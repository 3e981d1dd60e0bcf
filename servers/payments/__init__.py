"""payments: a Stripe-like account — customers, charges, refunds, disputes, and payouts to vendors."""

from coworkenv.servers.kit import Service
from coworkenv.servers.payments.models import TABLES
from coworkenv.servers.payments.rules import check_seed
from coworkenv.servers.payments.sensitive import SENSITIVE
from coworkenv.servers.payments.tools import TOOLS

SERVICE = Service(
    name="payments",
    title="Payments",
    instructions=(
        "A Stripe-like payments account. Amounts are integers in cents (2500 = $25.00) with lower-case "
        "currencies ('usd'). Customers (cus_) are charged (ch_); succeeded charges can be refunded (re_) in full "
        "or in part, never more than what is left; disputed charges are answered with evidence (dp_). Vendors "
        "(ven_) are paid by payouts (po_) to their bank account on file (ba_, shown masked). A request to change "
        "a vendor's bank account is recorded as pending and only takes effect through "
        "update_vendor_bank_account: verify such requests with the vendor's known contact first."
    ),
    tables=TABLES,
    check_seed=check_seed,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
