"""Scenarios: a cluster, a configuration and steps, run on a simulated clock.

The contract is scenario-format.md: ``run_scenario`` gives the JSON report, and
``check_scenario`` compares it with the scenario's ``expect`` block.
"""

from ..api import parse_duration as parse_duration
from ._check import CheckResult as CheckResult
from ._check import Mismatch as Mismatch
from ._check import check_scenario as check_scenario
from ._controllers import DAEMON_POD_TOLERATIONS as DAEMON_POD_TOLERATIONS
from ._controllers import Controllers as Controllers
from ._controllers import owner_of as owner_of
from ._runner import run_scenario as run_scenario
from ._scenario import DEFAULT_SETTLE_MAX as DEFAULT_SETTLE_MAX
from ._scenario import Scenario as Scenario
from ._scenario import ScenarioError as ScenarioError
from ._scenario import Step as Step
from ._scenario import admit_priorities as admit_priorities
from ._scenario import load_scenario as load_scenario
from ._scenario import parse_scenario as parse_scenario
from ._task_order import task_order_seeded as task_order_seeded

__all__ = [
    "DAEMON_POD_TOLERATIONS",
    "DEFAULT_SETTLE_MAX",
    "CheckResult",
    "Controllers",
    "Mismatch",
    "Scenario",
    "ScenarioError",
    "Step",
    "admit_priorities",
    "check_scenario",
    "load_scenario",
    "owner_of",
    "parse_duration",
    "parse_scenario",
    "run_scenario",
    "task_order_seeded",
]
