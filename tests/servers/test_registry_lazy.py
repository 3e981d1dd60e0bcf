"""The registry imports a shipped service when it is asked for by name, and every service when the whole registry
is read: `coworkenv serve tickets` and an environment of tickets alone import no other service."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from coworkenv.servers import SERVICES, get_service
from coworkenv.servers.kit import EnvironmentConfigError
from coworkenv.servers.registry import SHIPPED

PROBE = """
import json, sys
from coworkenv.servers.registry import SHIPPED

def services_imported():
    return sorted(n for n in SHIPPED if f"coworkenv.servers.{n}" in sys.modules)

out = {"at_import": services_imported()}
from coworkenv.servers import Environment, get_service
first = get_service("tickets")
out["by_name"] = services_imported()
with Environment.create({"tickets": {}, "crm": {}}, now="2026-03-02T09:00:00Z") as env:
    out["environment"] = services_imported()
from coworkenv.servers import SERVICES
out["whole"] = list(SERVICES)
out["same"] = SERVICES["tickets"] is first
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_service_is_imported_when_named_and_the_rest_when_the_registry_is_read() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["at_import"] == []
    assert out["by_name"] == ["tickets"]
    assert out["environment"] == ["crm", "tickets"]
    assert out["whole"][: len(SHIPPED)] == list(SHIPPED)  # in name order, whichever was imported first
    assert out["same"] is True


def test_an_unknown_name_still_says_what_is_known() -> None:
    with pytest.raises(EnvironmentConfigError, match="did you mean tickets"):
        get_service("tickts")
    assert set(SHIPPED) <= set(SERVICES)
