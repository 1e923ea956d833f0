"""Stand-in for verl's verl/trainer/main_ppo.py (trainlint fixture, not verl's code).

Only the Hydra entry point's decorator is kept: ``--config-path=config`` on a launch line is
resolved relative to this file, i.e. to verl/trainer/config/.
"""

import hydra


@hydra.main(config_path="config", config_name="ppo_trainer", version_base=None)
def main(config):
    """verl starts its Ray PPO trainer here."""


if __name__ == "__main__":
    main()
