"Mixed precision, like torch.amp: autocast regions and the gradient scaler (chapter 09a). A face."
from .memory import autocast, GradScaler, is_autocast_enabled, get_autocast_dtype  # 09a
