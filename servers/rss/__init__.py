"""rss: a feed reader and publisher — the feeds the company follows and their articles, and its own publications
(a public blog, an internal newsletter) to which it posts."""

from coworkenv.servers.kit import Service
from coworkenv.servers.rss.models import TABLES, check_seed
from coworkenv.servers.rss.sensitive import SENSITIVE
from coworkenv.servers.rss.tools import TOOLS

SERVICE = Service(
    name="rss",
    title="Feeds",
    instructions=(
        "The company's feed reader and publisher. Subscriptions are feeds we follow; publications are ours (a "
        "public one is read by anyone on the internet). List articles to browse (newest first), get_article to "
        "read one, mark_read and star_article to keep track. publish_article posts to one of our publications and "
        "can mail the post to recipients; a published post cannot be taken back."
    ),
    tables=TABLES,
    tools=TOOLS,
    sensitive=SENSITIVE,
    check_seed=check_seed,
)
