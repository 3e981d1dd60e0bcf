"""The ``coworkenv`` command: gathers the subcommands of all four packages (this is the top layer).

A subcommand's package is imported only when that subcommand runs: ``coworkenv serve`` loads the services and the
MCP SDK, not synthesis, the harness or training (an MCP client waits for ``serve`` to start). ``--help`` and an
unknown name load them all.
"""

from __future__ import annotations

import importlib

import click

from coworkenv.servers.cli import CommandGroup

SOURCES: dict[str, tuple[str, ...]] = {
    "coworkenv.servers.cli:COMMANDS": ("services", "serve", "state", "audit", "snapshot", "mcp-config", "demo"),
    "coworkenv.synth.cli:COMMANDS": ("schema", "validate", "workspace", "grade"),
    "coworkenv.synth.cli_synth:COMMANDS": ("plan", "synth"),
    "coworkenv.harness.cli:COMMANDS": ("run", "summary", "curate", "export", "report", "export-tasks"),
    "coworkenv.harness.openenv.cli:COMMANDS": ("openenv",),
    "coworkenv.harness.served:COMMANDS": ("play",),
    "coworkenv.harness.claw_eval.import_cli:COMMANDS": ("import",),
    "coworkenv.train.commands:COMMANDS": ("train",),
    "coworkenv.train.pipeline:pipeline_cmd": ("pipeline",),
}
"""Where the subcommands live (``module:attribute``, a command or a list of them) and the names found there, so
that a command's module is the only one imported to run it. A name missing here is still found (by loading every
module); ``tests/test_cli_lazy.py`` keeps the names true."""


def commands_of(source: str) -> list[click.Command]:
    """The commands a :data:`SOURCES` entry names, its module imported now."""
    module, _, attribute = source.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    return list(found) if isinstance(found, list | tuple) else [found]


class LazyGroup(CommandGroup):
    """A :class:`CommandGroup` whose commands are imported from :data:`SOURCES` when they are asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(str(c.name) for source in SOURCES for c in commands_of(source))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        named = [source for source, names in SOURCES.items() if cmd_name in names]
        for source in [*named, *(s for s in SOURCES if s not in named)]:
            for command in commands_of(source):
                if command.name == cmd_name:
                    return command
        return None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="coworkenv")
def main() -> None:
    """coworkenv: executable work environments for training and evaluating AI coworker agents."""


if __name__ == "__main__":
    main()
