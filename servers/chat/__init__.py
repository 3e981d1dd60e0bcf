"""chat: a Slack-like team chat — members, public and private channels, threads, reactions, direct messages."""

from coworkenv.servers.chat.models import TABLES, check_seed
from coworkenv.servers.chat.sensitive import SENSITIVE
from coworkenv.servers.chat.tools import TOOLS
from coworkenv.servers.kit import Service

SERVICE = Service(
    name="chat",
    title="Team chat",
    instructions=(
        "A Slack-like team chat. List channels, read a channel's history (newest first) and threads, search "
        "messages, post in channels you are a member of (join public ones first), reply in threads, react, and "
        "send direct messages to one person. Create channels and invite members. Tools act as the workspace's "
        "primary user, the person you work for."
    ),
    tables=TABLES,
    check_seed=check_seed,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
