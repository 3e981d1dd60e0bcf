"""coworkenv.train"""

import os

# Before torch loads OpenMP (which reads this once): threads that wait for work sleep instead of spinning. Where
# other jobs share the cores, spinning threads take turns from them and from each other: a CPU training step
# measured 1.4x-2.5x the tokens a second with it while other jobs ran, the same alone on the machine
# (bench/learning/bench_step.py, 2 cores). A value set in the environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
