"""coworkenv.synth: the task contract (``synth.contract``), the generators that write tasks (``synth.generate``), and
the LLM provider plumbing both the synthesizer and the harness use (``synth.providers``).

The package re-exports the contract's public names; importing it loads no generator.
"""

from coworkenv.synth.contract import *  # noqa: F403  (the contract's public names, listed once there)
from coworkenv.synth.contract import __all__ as __all__
