"The launcher, torchrun's job done by mpiexec: `python -m minitorch_nb.distributed.run -n 4 train.py`. A face."
import sys
from .core import main  # 09b

if __name__ == "__main__":
    sys.exit(main())
