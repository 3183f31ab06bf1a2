"""Scenarios: a cluster, a configuration and steps, run on a simulated clock.

The contract is scenario-format.md: ``run_scenario`` gives the JSON report, and
``check_scenario`` compares it with the scenario's ``expect`` block.
"""

from ..api import parse_duration as parse_duration
from ._check import CheckResult as CheckResult
from ._check import Mismatch as Mismatch
from ._check import check_scenario as check_scenario
from ._runner import run_scenario as run_scenario
from ._scenario import DEFAULT_SETTLE_MAX as DEFAULT_SETTLE_MAX
from ._scenario import Scenario as Scenario
from ._scenario import ScenarioError as ScenarioError
from ._scenario import Step as Step
from ._scenario import admit_priorities as admit_priorities
from ._scenario import load_scenario as load_scenario
from ._scenario import parse_scenario as parse_scenario

__all__ = [
    "DEFAULT_SETTLE_MAX",
    "CheckResult",
    "Mismatch",
    "Scenario",
    "ScenarioError",
    "Step",
    "admit_priorities",
    "check_scenario",
    "load_scenario",
    "parse_duration",
    "parse_scenario",
    "run_scenario",
]
