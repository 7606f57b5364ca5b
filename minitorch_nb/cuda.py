"mt.cuda, after torch.cuda: whether a GPU is there, streams, events and pinned memory (device 'cuda', chapter 06c)."
from .backends.cuda import (is_available, is_simulator, device_count, synchronize, current_stream, default_stream,
                            stream, pinned_empty, Stream, Event)
