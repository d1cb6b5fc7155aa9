"""``ember.nn.utils.rnn``: PyTorch's packed-sequence utilities.

A :class:`PackedSequence` holds the time-major concatenation of the valid steps of a batch of
sequences sorted by decreasing length: ``data[offset_t : offset_t + batch_sizes[t]]`` is step
``t`` of the ``batch_sizes[t]`` longest sequences. Packing and padding are single
``index_select`` gathers (the indices are host-side bookkeeping built from the lengths), so the
gradient, forward-mode tangent and double backward come from that op.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

import ember

from ..._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """``torch.nn.utils.rnn.PackedSequence``: a named tuple ``(data, batch_sizes,
    sorted_indices, unsorted_indices)``; ``unsorted_indices`` is derived when omitted."""

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise AssertionError("Expected data to be a list or tuple of length 2")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Move/cast ``data`` like ``Tensor.to``; the indices follow ``data``'s device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = _bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = _bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cpu", *args, **kwargs)

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cuda", *args, **kwargs)

    def double(self) -> PackedSequence:
        return self.to(dtype=ember.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=ember.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=ember.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=ember.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=ember.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=ember.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=ember.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=ember.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """``torch.nn.utils.rnn.invert_permutation``: the permutation ``q`` with
    ``q[permutation[i]] = i`` (``None`` stays ``None``)."""
    if permutation is None:
        return None
    output = ember.empty_like(permutation)
    output.scatter_(0, permutation,
                    ember.arange(0, permutation.numel(), device=permutation.device))
    return output


def _int_list(t: Tensor) -> list[int]:
    return [int(v) for v in t.tolist()]


def _pack_padded(input: Tensor, lengths: list[int], batch_first: bool):
    """``_VF._pack_padded_sequence``: PyTorch's checks, then one gather of the valid steps."""
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    seq_len, batch = int(input.shape[0]), int(input.shape[1])
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    for i in range(batch - 1):
        if lengths[batch - 1 - i] > lengths[batch - 2 - i]:
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
    if lengths[0] > seq_len:
        # PyTorch reads past the end of the input here; ember refuses instead.
        raise RuntimeError(f"pack_padded_sequence: the longest length ({lengths[0]}) exceeds "
                           f"the padded sequence length ({seq_len})")
    lens = np.asarray(lengths, dtype=np.int64)
    batch_sizes = [int((lens > t).sum()) for t in range(int(lens[0]))]
    index = np.concatenate([t * batch + np.arange(b) for t, b in enumerate(batch_sizes)])
    flat = input.reshape((seq_len * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, ember.as_tensor(index, dtype=ember.int64, device=input.device))
    return data, ember.tensor(batch_sizes, dtype=ember.int64)


def pack_padded_sequence(input: Tensor, lengths: Tensor | list[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """``torch.nn.utils.rnn.pack_padded_sequence``: pack a padded ``(T, B, *)`` (or
    ``(B, T, *)``) batch; with ``enforce_sorted=False`` the batch is sorted by length first and
    the permutation is kept in ``sorted_indices``."""
    if not isinstance(lengths, Tensor):
        lengths = ember.as_tensor(lengths, dtype=ember.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=ember.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = ember.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, _int_list(lengths), batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """``torch.nn.utils.rnn.pad_packed_sequence``: the inverse of ``pack_padded_sequence``;
    returns the padded batch (in the original order) and the lengths."""
    max_seq_length = int(sequence.batch_sizes.size(0))
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    sizes = _int_list(sequence.batch_sizes)
    batch = sizes[0]
    n = int(data.shape[0])
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    # Each (t, b) reads its packed row, or row ``n`` (one appended padding row) past its length.
    index = np.full((max_seq_length, batch), n, dtype=np.int64)
    for t, b in enumerate(sizes):
        index[t, :b] = offsets[t] + np.arange(b)
    if batch_first:
        index = index.T
    rest = tuple(data.shape[1:])
    pad_row = data.new_full((1,) + rest, padding_value)
    padded = ember.cat([data, pad_row]).index_select(
        0, ember.as_tensor(index.reshape(-1), dtype=ember.int64, device=data.device))
    padded = padded.reshape(index.shape + rest)
    lens = np.asarray([sum(1 for s in sizes if s > b) for b in range(batch)], dtype=np.int64)
    lengths = ember.as_tensor(lens, dtype=ember.int64)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        return (padded.index_select(0 if batch_first else 1, unsorted_indices),
                lengths[unsorted_indices.cpu()])
    return padded, lengths


def pad_sequence(sequences: Tensor | list[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """``torch.nn.utils.rnn.pad_sequence``: stack variable-length sequences, padding each to
    the longest on ``padding_side``; the result has the first sequence's dtype."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    max_len = max(int(s.size(0)) for s in sequences)
    trailing = tuple(first.shape[1:])
    padded = []
    for seq in sequences:
        length = int(seq.size(0))
        if tuple(seq.shape[1:]) != trailing:
            seq = seq.expand((length,) + trailing)
        seq = seq.to(first.dtype)
        if length < max_len:
            block = first.new_full((max_len - length,) + trailing, padding_value)
            seq = ember.cat([seq, block] if padding_side == "right" else [block, seq])
        padded.append(seq)
    return ember.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """``torch.nn.utils.rnn.unpad_sequence``: the list of unpadded sequences. (PyTorch
    transposes a time-major argument in place as a side effect; ember leaves it as it was.)"""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(length)] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """``torch.nn.utils.rnn.pack_sequence``: pad then pack a list of sequences."""
    lengths = ember.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """``torch.nn.utils.rnn.unpack_sequence``: the list of sequences a PackedSequence holds."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
