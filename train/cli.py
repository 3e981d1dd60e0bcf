"""The ``coworkenv`` command: gathers the subcommands of all four packages (this is the top layer)."""

from __future__ import annotations

import click

from coworkenv.harness.cli import COMMANDS as HARNESS_COMMANDS
from coworkenv.servers.cli import COMMANDS as SERVER_COMMANDS
from coworkenv.servers.cli import CommandGroup
from coworkenv.synth.cli import COMMANDS as SYNTH_COMMANDS
from coworkenv.synth.cli_synth import COMMANDS as SYNTHESIS_COMMANDS
from coworkenv.train.commands import COMMANDS as TRAIN_COMMANDS
from coworkenv.train.pipeline import pipeline_cmd


@click.group(cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="coworkenv")
def main() -> None:
    """coworkenv: executable work environments for training and evaluating AI coworker agents."""


for _cmd in [*SERVER_COMMANDS, *SYNTH_COMMANDS, *SYNTHESIS_COMMANDS, *HARNESS_COMMANDS, *TRAIN_COMMANDS, pipeline_cmd]:
    main.add_command(_cmd)


if __name__ == "__main__":
    main()
