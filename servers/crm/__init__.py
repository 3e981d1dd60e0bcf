"""crm: a Salesforce-like CRM — staff users, accounts, contacts, opportunities in a pipeline, activities."""

from coworkenv.servers.crm.models import TABLES
from coworkenv.servers.crm.sensitive import SENSITIVE
from coworkenv.servers.crm.tools import TOOLS
from coworkenv.servers.kit import Service

SERVICE = Service(
    name="crm",
    title="CRM",
    instructions=(
        "A sales CRM. Accounts are companies (prospect → active → churned) managed by an account manager "
        "(owner, one of our staff users); contacts are their people; opportunities are deals moving through "
        "prospecting → qualification → proposal → negotiation → closed_won/closed_lost; activities log notes, "
        "calls, emails and meetings. All money (amount, annual_revenue) is in integer cents (USD). Search "
        "before creating: domains and contact emails are unique."
    ),
    tables=TABLES,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
