"Utilities for batches of sequences, like torch.nn.utils.rnn. A face over chapter 10's file."
from ..rnn import pad_sequence, PackedSequence, pack_padded_sequence, pad_packed_sequence  # 10
