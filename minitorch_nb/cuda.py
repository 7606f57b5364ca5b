"mt.cuda, after torch.cuda: whether a GPU is there, streams, events and pinned memory (device 'cuda', chapter 06c)."
from .backends.cuda import cuda as _api, Stream, Event

is_available, is_simulator, device_count, synchronize = (_api.is_available, _api.is_simulator, _api.device_count,
                                                          _api.synchronize)
current_stream, default_stream, stream, pinned_empty = (_api.current_stream, _api.default_stream, _api.stream,
                                                        _api.pinned_empty)

__all__ = ["is_available", "is_simulator", "device_count", "synchronize", "Stream", "Event", "current_stream",
           "default_stream", "stream", "pinned_empty"]
