"Utilities, like torch.utils: `utils.data` holds datasets, samplers and the DataLoader. A face."
from . import data  # 04
from . import checkpoint  # 09a
