import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402

# The oracle's own thread pool only slows the tiny computations of the tests (its workers spin
# while waiting on a loaded 2-core machine); one thread gives the same values.
torch.set_num_threads(1)
