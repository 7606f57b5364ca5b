"A reusable training loop with callbacks (Learner), metrics, progress, recording and checkpoints. A face."
from .training import (Learner, Callback, Recorder, ProgressCallback, SaveCheckpoint, GradientClipping,  # 03
                       CancelBatchException, CancelEpochException, CancelFitException, accuracy,
                       save_checkpoint, load_checkpoint)
