"Activation checkpointing, like torch.utils.checkpoint (chapter 09a). A face."
from ..memory import checkpoint, checkpoint_sequential, CheckpointFunction  # 09a
