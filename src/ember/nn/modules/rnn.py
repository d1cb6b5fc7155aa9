"""Recurrent layers: PyTorch's ``RNNBase``, ``RNN``, ``LSTM``, ``GRU`` and their cells.

Parameter names, shapes, gate order (LSTM ``i, f, g, o``; GRU ``r, z, n``), initialisation,
reprs, argument checks and error messages are PyTorch's, so state_dicts interchange. The
recurrence is written with ember ops: each layer-direction projects the whole input sequence
with one ``linear`` and then runs one hidden ``linear`` plus the gate arithmetic per step, so
gradients, forward-mode tangents and double backward all come from the ops. Packed sequences
run the same loop over shrinking batches (``batch_sizes[t]`` rows at step ``t``).
"""
from __future__ import annotations

import math
import numbers
import warnings

import ember

from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


# --------------------------------------------------------------------------------------------
# One time step. ``gi`` is the precomputed input projection (with ``b_ih``) for this step.

def _step(mode: str, gi: Tensor, h: Tensor, c: Tensor | None, w_hh: Tensor,
          b_hh: Tensor | None, w_hr: Tensor | None) -> tuple[Tensor, Tensor | None]:
    gh = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
        h = ember.sigmoid(o) * ember.tanh(c)
        if w_hr is not None:
            h = F.linear(h, w_hr)
        return h, c
    if mode == "GRU":
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        r = ember.sigmoid(i_r + h_r)
        z = ember.sigmoid(i_z + h_z)
        n = ember.tanh(i_n + r * h_n)
        return (h - n) * z + n, None
    if mode == "RNN_TANH":
        return ember.tanh(gi + gh), None
    return ember.relu(gi + gh), None


def _direction(mode: str, gis: list[Tensor], sizes: list[int], h0: Tensor, c0: Tensor | None,
               w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None, reverse: bool):
    """Run one layer in one direction over per-step input projections ``gis`` (step ``t`` has
    ``sizes[t]`` rows, non-increasing). Returns the per-step outputs and the final states of
    every batch row (a row's final state is the one after its own last step)."""
    steps = len(gis)
    outs: list = [None] * steps
    h, c = h0, c0
    full = int(h0.shape[0])
    if not reverse:
        done_h, done_c = [], []
        cur = full
        for t in range(steps):
            b = sizes[t]
            if b < cur:  # rows b..cur ended at step t-1
                done_h.append(h[b:cur])
                h = h[:b]
                if c is not None:
                    done_c.append(c[b:cur])
                    c = c[:b]
                cur = b
            h, c = _step(mode, gis[t], h, c, w_hh, b_hh, w_hr)
            outs[t] = h
        if done_h:
            h = ember.cat([h] + done_h[::-1])
            if c is not None:
                c = ember.cat([c] + done_c[::-1])
        return outs, h, c
    cur = sizes[-1] if steps else full
    if cur < full:
        h = h0[:cur]
        c = None if c0 is None else c0[:cur]
    for t in range(steps - 1, -1, -1):
        b = sizes[t]
        if b > cur:  # rows cur..b start at step t, from their initial state
            h = ember.cat([h, h0[cur:b]])
            if c is not None:
                c = ember.cat([c, c0[cur:b]])
            cur = b
        h, c = _step(mode, gis[t], h, c, w_hh, b_hh, w_hr)
        outs[t] = h
    return outs, h, c


def _run(mode: str, input: Tensor, sizes: list[int] | None, hx: Tensor, cx: Tensor | None,
         weights: list[list[Tensor]], has_bias: bool, num_layers: int, dropout: float,
         train: bool, bidirectional: bool, batch_first: bool):
    """The multi-layer recurrence (``_VF.rnn_tanh`` / ``lstm`` / ``gru``). ``sizes`` is None
    for a padded ``(T, B, *)`` input, else the packed ``batch_sizes``."""
    packed = sizes is not None
    x = input.transpose(0, 1) if (batch_first and not packed) else input
    if not packed:
        sizes = [int(x.shape[1])] * int(x.shape[0])
    dirs = 2 if bidirectional else 1
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            ws = weights[layer * dirs + d]
            w_ih, w_hh = ws[0], ws[1]
            b_ih, b_hh = (ws[2], ws[3]) if has_bias else (None, None)
            w_hr = ws[-1] if mode == "LSTM" and len(ws) in (3, 5) else None
            gi = F.linear(x, w_ih, b_ih)
            gis = list(gi.split(sizes, 0)) if packed else list(gi.unbind(0))
            k = layer * dirs + d
            step_outs, h, c = _direction(mode, gis, sizes, hx[k], None if cx is None else cx[k],
                                         w_hh, b_hh, w_hr, reverse=d == 1)
            outs.append(ember.cat(step_outs, 0) if packed else ember.stack(step_outs, 0))
            hs.append(h)
            cs.append(c)
        x = outs[0] if dirs == 1 else ember.cat(outs, -1)
        if dropout != 0 and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    if batch_first and not packed:
        x = x.transpose(0, 1)
    return x, ember.stack(hs, 0), (ember.stack(cs, 0) if cx is not None else None)


# --------------------------------------------------------------------------------------------

class RNNBase(Module):
    """``torch.nn.RNNBase``: parameter creation (PyTorch's names and order), checks and repr
    shared by :class:`RNN`, :class:`LSTM` and :class:`GRU`."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(
                f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size

        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                params = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    params += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    params += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for fmt, shape in params:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(ember.empty(shape, **factory_kwargs)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self) -> None:
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None
                              for wn in self._flat_weights_names]

    def __setattr__(self, attr, value) -> None:
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names:
            self._flat_weights[names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self) -> None:
        """No-op, as in PyTorch on the CPU (it only repacks weights for cuDNN)."""

    def _apply(self, fn, recurse=True):
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()
        return ret

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        w0 = self._flat_weights[0]
        if input.dtype != w0.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}). "
                f"Convert input: input.to({w0.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor,
                                 batch_sizes: Tensor | None) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor,
                           batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def _weights(self) -> list[list[Tensor]]:
        # Read the attributes each call, so replaced or re-cast parameters are used.
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def _zeros(self, batch: int, size: int, like: Tensor) -> Tensor:
        dirs = 2 if self.bidirectional else 1
        return ember.zeros(self.num_layers * dirs, batch, size, dtype=like.dtype,
                           device=like.device)

    def _unpack_input(self, input, name: str):
        """Split a PackedSequence or add the batch dim of an unbatched input; returns
        ``(input, batch_sizes, sizes_list, sorted, unsorted, is_batched, batch)``."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(b) for b in batch_sizes.tolist()]
            return data, batch_sizes, sizes, sorted_indices, unsorted_indices, True, sizes[0]
        if input.dim() not in (2, 3):
            if name == "RNN":
                raise ValueError(
                    f"RNN: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        batch = input.size(0) if self.batch_first else input.size(1)
        return input, None, None, None, None, is_batched, batch

    def _check_length(self, input: Tensor, sizes) -> None:
        if sizes is None and input.size(0 if not self.batch_first else 1) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")

    def _finish(self, orig_input, output: Tensor, batch_sizes, sorted_indices, unsorted_indices,
                is_batched: bool):
        if isinstance(orig_input, PackedSequence):
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        if not is_batched:
            return output.squeeze(0 if self.batch_first else 1)
        return output


class _SimpleRecurrent(RNNBase):
    """Forward shared by :class:`RNN` and :class:`GRU` (one hidden state)."""

    _name = "RNN"

    def forward(self, input, hx=None):
        orig_input = input
        input, batch_sizes, sizes, sorted_indices, unsorted_indices, is_batched, batch = \
            self._unpack_input(input, self._name)
        if not isinstance(orig_input, PackedSequence):
            if not is_batched:
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but "
                                           f"got {hx.dim()}-D tensor")
                    hx = hx.unsqueeze(1)
            elif hx is not None and hx.dim() != 3:
                raise RuntimeError("For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
        if hx is None:
            hx = self._zeros(batch, self.hidden_size, input)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        self._check_length(input, sizes)
        output, hidden, _ = _run(self.mode, input, sizes, hx, None, self._weights(), self.bias,
                                 self.num_layers, self.dropout, self.training,
                                 self.bidirectional, self.batch_first)
        output = self._finish(orig_input, output, batch_sizes, sorted_indices, unsorted_indices,
                              is_batched)
        if not is_batched:
            hidden = hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)


class RNN(_SimpleRecurrent):
    """``torch.nn.RNN``: Elman RNN, ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``
    with ``act`` tanh or relu."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class GRU(_SimpleRecurrent):
    """``torch.nn.GRU``: gates ``r, z, n`` in PyTorch's order, ``h' = (1 - z) * n + z * h``."""

    _name = "GRU"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """``torch.nn.LSTM``: gates ``i, f, g, o`` in PyTorch's order; with ``proj_size > 0`` the
    hidden state is projected by ``weight_hr_l*``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor,
                               batch_sizes: Tensor | None) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: tuple[Tensor, Tensor],
                           batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: tuple[Tensor, Tensor],
                       permutation: Tensor | None) -> tuple[Tensor, Tensor]:
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        orig_input = input
        input, batch_sizes, sizes, sorted_indices, unsorted_indices, is_batched, batch = \
            self._unpack_input(input, "LSTM")
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            hx = (self._zeros(batch, real_hidden_size, input),
                  self._zeros(batch, self.hidden_size, input))
            self.check_forward_args(input, hx, batch_sizes)
        elif isinstance(orig_input, PackedSequence):
            hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(input, hx, batch_sizes)
        else:
            if len(hx) != 2:
                raise RuntimeError("lstm expects two hidden states")
            if is_batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but "
                                       f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D "
                                       f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(input, hx, batch_sizes)
        self._check_length(input, sizes)
        output, h, c = _run("LSTM", input, sizes, hx[0], hx[1], self._weights(), self.bias,
                            self.num_layers, self.dropout, self.training, self.bidirectional,
                            self.batch_first)
        output = self._finish(orig_input, output, batch_sizes, sorted_indices, unsorted_indices,
                              is_batched)
        if not is_batched:
            h, c = h.squeeze(1), c.squeeze(1)
        return output, self.permute_hidden((h, c), unsorted_indices)


# --------------------------------------------------------------------------------------------
# Cells

class RNNCellBase(Module):
    """``torch.nn.RNNCellBase``: ``weight_ih``, ``weight_hh`` (and biases) of one step."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(
            ember.empty((num_chunks * hidden_size, input_size), **factory_kwargs))
        self.weight_hh = Parameter(
            ember.empty((num_chunks * hidden_size, hidden_size), **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check_cell(self, input: Tensor, hxs: tuple[Tensor, ...]) -> None:
        # The checks of ATen's ``check_rnn_cell_forward_input/hidden``.
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                               f"{self.input_size}")
        for i, h in enumerate(hxs):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                                   f"batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, "
                                   f"expected {self.hidden_size}")

    def _zeros(self, input: Tensor) -> Tensor:
        return ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                           device=input.device)


class RNNCell(RNNCellBase):
    """``torch.nn.RNNCell``: one Elman step with tanh or relu."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if input.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = self._zeros(input)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check_cell(input, (hx,))
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        ret, _ = _step(mode, gi, hx, None, self.weight_hh, self.bias_hh, None)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """``torch.nn.LSTMCell``: one LSTM step, gates ``i, f, g, o``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        if input.dim() not in (1, 2):
            raise ValueError(
                f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        if len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        self._check_cell(input, tuple(hx))
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        h, c = _step("LSTM", gi, hx[0], hx[1], self.weight_hh, self.bias_hh, None)
        if not is_batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """``torch.nn.GRUCell``: one GRU step, gates ``r, z, n``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if input.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = self._zeros(input)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        self._check_cell(input, (hx,))
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        ret, _ = _step("GRU", gi, hx, None, self.weight_hh, self.bias_hh, None)
        return ret if is_batched else ret.squeeze(0)
