"""email: a Gmail-like mail service — mailboxes, messages and threads, labels, read/unread, drafts."""

from coworkenv.servers.email.models import TABLES, check_seed
from coworkenv.servers.email.sensitive import SENSITIVE
from coworkenv.servers.email.tools import TOOLS
from coworkenv.servers.kit import Service

SERVICE = Service(
    name="email",
    title="Email",
    instructions=(
        "A Gmail-like email service: you act in the user's own mailbox (the colleagues' mailboxes it also holds "
        "only receive the mail sent to them). Search the mailbox with filters, read messages and whole threads, "
        "send, reply (the thread is kept) and forward, save drafts for review and send them, and organise mail with "
        "labels: remove UNREAD to mark read, remove INBOX to archive, STARRED, SPAM and your own labels; trash and "
        "restore."
    ),
    tables=TABLES,
    check_seed=check_seed,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
