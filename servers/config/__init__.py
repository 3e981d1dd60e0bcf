"""config: an integrations admin console — the company's connections to outside services (endpoints, credentials,
settings, health) and the notifications sent about them."""

from coworkenv.servers.config.models import TABLES, check_seed
from coworkenv.servers.config.sensitive import SENSITIVE
from coworkenv.servers.config.tools import TOOLS
from coworkenv.servers.kit import Service

SERVICE = Service(
    name="config",
    title="Integrations console",
    instructions=(
        "The company's integrations with outside services. Each has a status (active, inactive, degraded, error, "
        "expired), an endpoint, settings, usage and an error rate (a fraction: 0.12 is 12 %), and credentials that "
        "tools show masked. test_integration says what is wrong with one. Credentials are replaced only with "
        "rotate_secret, and never belong in a notification or a reply. Notify people or '#channels' with "
        "send_notification."
    ),
    tables=TABLES,
    tools=TOOLS,
    sensitive=SENSITIVE,
    check_seed=check_seed,
)
