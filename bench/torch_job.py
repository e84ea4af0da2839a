# SPDX-License-Identifier: MIT
"""torch_job.py NODE HOLD_MS: bench/card_job's protocol from a real PyTorch
process (bench/follow.sh with BENCH_JOB=torch). It imports torch and runs one
matrix product first, so its /proc/<pid>/maps is a real framework's (Debian's
python3-torch: about 1700 lines, 300 of them executable file mappings), then
prints "<pid> <CLOCK_REALTIME us just before open()>", opens NODE, holds it
HOLD_MS and exits. TORCH_JOB_LOAD=LIB[:LIB...]: those libraries loaded
after torch (as a framework's device plugin loads its runtime's)."""
import ctypes
import os
import sys
import time

import torch

torch.randn(64, 64) @ torch.randn(64, 64)
for lib in filter(None, os.environ.get("TORCH_JOB_LOAD", "").split(":")):
    ctypes.CDLL(lib)
t = time.clock_gettime_ns(time.CLOCK_REALTIME) // 1000
fd = os.open(sys.argv[1], os.O_RDONLY)
print(os.getpid(), t, flush=True)
time.sleep(int(sys.argv[2]) / 1000)
os.close(fd)
