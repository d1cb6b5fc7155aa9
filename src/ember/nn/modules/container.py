"""Containers (``torch/nn/modules/container.py``): Sequential, ModuleList, ModuleDict,
ParameterList and ParameterDict, with PyTorch's indexing, renumbering and reprs."""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections import abc as container_abcs
from itertools import chain, islice
from typing import Any, Iterable, Iterator

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent, typename

__all__ = ["Container", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList",
           "Sequential"]


class Container(Module):
    """Deprecated base (``torch.nn.Container``): keyword arguments become children."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        import warnings
        warnings.warn("nn.Container is deprecated. All of it's functionality is now implemented "
                      "in nn.Module. Subclass that instead.", stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules called in order, each on the previous one's output."""

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        # renumber, as PyTorch does
        self._modules = OrderedDict(
            zip([str(i) for i in range(len(self._modules))], self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other) -> Sequential:
        if isinstance(other, Sequential):
            ret = Sequential()
            for layer in self:
                ret.append(layer)
            for layer in other:
                ret.append(layer)
            return ret
        raise ValueError("add operator supports only objects of Sequential class, but "
                         f"{str(type(other))} is given.")

    def pop(self, key) -> Module:
        v = self[key]
        del self[key]
        return v

    def __iadd__(self, other) -> Sequential:
        if isinstance(other, Sequential):
            offset = len(self)
            for i, module in enumerate(other):
                self.add_module(str(i + offset), module)
            return self
        raise ValueError("add operator supports only objects of Sequential class, but "
                         f"{str(type(other))} is given.")

    def _check_factor(self, other) -> None:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other: int) -> Sequential:
        self._check_factor(other)
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: int) -> Sequential:
        self._check_factor(other)
        n = len(self)
        offset = n
        for _ in range(other - 1):
            for i in range(n):
                self.add_module(str(i + offset), self._modules[str(i)])
            offset += n
        return self

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    """A list of submodules, registered under their indices."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx) -> str:
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        self._modules = OrderedDict(
            zip([str(i) for i in range(len(self._modules))], self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        """PyTorch's compressed repr: runs of identical children print once as ``(i-j): n x``."""
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        spans = [[0, 0]]
        blocks = [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
                continue
            spans.append([i, i])
            blocks.append(r)
        lines = []
        for (s, e), b in zip(spans, blocks):
            local = f"({s}): {b}" if s == e else f"({s}-{e}): {e - s + 1} x {b}"
            lines.append(_addindent(local, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key) -> Module:
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of submodules."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, container_abcs.Iterable):
                raise TypeError("ModuleDict update sequence element #" + str(j)
                                + " should be Iterable; is" + type(m).__name__)
            if not len(m) == 2:
                raise ValueError("ModuleDict update sequence element #" + str(j)
                                 + " has length " + str(len(m)) + "; 2 is required")
            self[m[0]] = m[1]


def _describe(p) -> str:
    return "{} containing: [{} of size {}]".format(
        "Parameter" if isinstance(p, Parameter) else "Tensor",
        "{}", "x".join(str(s) for s in p.size()))


class ParameterList(Module):
    """A list of parameters (plain tensors become Parameters), registered under indices."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx) -> str:
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(len(self))
            out = self.__class__()
            for i in range(start, stop, step):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        idx = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> ParameterList:
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        lines = []
        for k, p in enumerate(self):
            if isinstance(p, Tensor):
                lines.append("  (" + str(k) + "): " + _describe(p).format(p.dtype))
            else:
                lines.append("  (" + str(k) + "): Object of type: " + type(p).__name__)
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (plain tensors become Parameters)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default: Any | None = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple:
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any | None = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any | None = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, container_abcs.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, container_abcs.Iterable):
                    raise TypeError("ParameterDict update sequence element #" + str(j)
                                    + " should be Iterable; is" + type(p).__name__)
                if not len(p) == 2:
                    raise ValueError("ParameterDict update sequence element #" + str(j)
                                     + " has length " + str(len(p)) + "; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                lines.append("  (" + str(k) + "): " + _describe(p).format(typename(p)))
            else:
                lines.append("  (" + str(k) + "): Object of type: " + type(p).__name__)
        return "\n".join(lines)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        c = self.copy()
        c.update(other)
        return c

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        c = other.copy()
        c.update(self)
        return c

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
