"""scheduler: cron jobs — what runs when (five-field schedules in UTC), enabled or not, and each job's run history."""

from coworkenv.servers.kit import Service
from coworkenv.servers.scheduler.models import TABLES, check_seed
from coworkenv.servers.scheduler.sensitive import SENSITIVE
from coworkenv.servers.scheduler.tools import TOOLS

SERVICE = Service(
    name="scheduler",
    title="Scheduled jobs",
    instructions=(
        "The company's cron jobs. Each job runs its action on a cron schedule read in UTC (minute hour "
        "day-of-month month day-of-week, e.g. '0 2 * * *' is 02:00 daily) while enabled, and keeps a history of "
        "runs. Read a job's runs to see why it failed. Prefer disable_job over delete_job; run_job really runs "
        "the action now."
    ),
    tables=TABLES,
    tools=TOOLS,
    sensitive=SENSITIVE,
    check_seed=check_seed,
)
