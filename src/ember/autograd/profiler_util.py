"""Profiler result types: ``FunctionEvent``, ``FunctionEventAvg``, ``EventList`` and the table
(``torch.autograd.profiler_util``).

Times are microseconds (floats). An event's ``self`` time and memory exclude its direct
children's totals; children are known exactly from the recording (ranges nest by construction),
or, for events read from elsewhere (``load_nvprof``), from interval containment per thread.
"""
from __future__ import annotations

import enum
import itertools
import json
import math
import os
from collections import defaultdict, namedtuple
from operator import attrgetter

__all__ = [
    "DeviceType",
    "EventList",
    "FormattedTimesMixin",
    "FunctionEvent",
    "FunctionEventAvg",
    "Interval",
    "Kernel",
    "StringTable",
]


class DeviceType(enum.IntEnum):
    """Where an event ran (``torch.autograd.DeviceType``); ember only ever records CPU."""

    CPU = 0
    CUDA = 1

    def __str__(self) -> str:
        return f"DeviceType.{self.name}"


class EventList(list):
    """A list of ``FunctionEvent`` (or ``FunctionEventAvg``) with analysis helpers."""

    def __init__(self, *args, **kwargs):
        use_device = kwargs.pop("use_device", None)
        profile_memory = kwargs.pop("profile_memory", False)
        with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._tree_built = False
        self._with_flops = with_flops

    def _build_tree(self):
        self._populate_cpu_children()
        self._remove_dup_nodes()
        self._tree_built = True

    def __str__(self):
        return self.table()

    def _remove_dup_nodes(self):
        """Drop an event whose parent has the same name and no other child (as PyTorch)."""
        while True:
            drop = set()
            for i, evt in enumerate(self):
                p = evt.cpu_parent
                if p is not None and p.name == evt.name and len(p.cpu_children) == 1:
                    p.cpu_children = evt.cpu_children
                    p.kernels = evt.kernels
                    for ch in evt.cpu_children:
                        ch.cpu_parent = p
                    drop.add(i)
            if not drop:
                break
            keep = [e for i, e in enumerate(self) if i not in drop]
            self.clear()
            self.extend(keep)

    def _populate_cpu_children(self):
        """Link parents and children by interval containment, per (thread, node): an event is a
        child of the innermost earlier event whose range holds it. Events whose links are
        already set (recorded nesting) are left alone."""
        if any(e.cpu_parent is not None or e.cpu_children for e in self):
            return
        events = sorted((e for e in self if not e.is_async and e.device_type == DeviceType.CPU),
                        key=attrgetter("thread"))
        for _, group in itertools.groupby(events, key=lambda e: (e.thread, e.node_id)):
            ordered = sorted(group, key=lambda e: (e.time_range.start, -e.time_range.end))
            open_ = []
            for evt in ordered:
                while open_:
                    parent = open_[-1]
                    if evt.time_range.start >= parent.time_range.end or \
                            evt.time_range.end > parent.time_range.end:
                        open_.pop()
                    else:
                        parent.append_cpu_child(evt)
                        evt.set_cpu_parent(parent)
                        break
                open_.append(evt)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """The events as a text table, like PyTorch's.

        ``sort_by`` names an attribute (``cpu_time``, ``cpu_time_total``,
        ``self_cpu_time_total``, ``cpu_memory_usage``, ``self_cpu_memory_usage``, ``count``...);
        rows are sorted by it, largest first. ``top_level_events_only`` shows only events with
        no parent. ``time_unit`` forces ``"s"``, ``"ms"`` or ``"us"``.
        """
        return _build_table(self, sort_by=sort_by, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            profile_memory=self._profile_memory, with_flops=self._with_flops,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON object format with ``traceEvents``), which
        ``chrome://tracing`` and Perfetto open."""
        pid = os.getpid()
        trace = []
        for evt in self:
            if evt.trace_name is None:
                continue
            args = {"External id": evt.id}
            if evt.sequence_nr >= 0:
                args["Sequence number"] = evt.sequence_nr
            if evt.input_shapes:
                args["Input Dims"] = evt.input_shapes
            if evt.flops:
                args["flops"] = evt.flops
            if evt.stack:
                args["Call stack"] = ";".join(evt.stack)
            if getattr(evt, "args", None) is not None:
                args["args"] = evt.args
            cat = "user_annotation" if evt.is_user_annotation else "cpu_op"
            trace.append({"ph": "X", "cat": cat, "name": evt.trace_name, "pid": pid,
                          "tid": evt.thread, "ts": evt.time_range.start,
                          "dur": evt.time_range.elapsed_us(), "args": args})
            if evt.cpu_memory_usage and evt.name == "[memory]":
                trace[-1]["args"]["Bytes"] = evt.cpu_memory_usage
        tids = sorted({e["tid"] for e in trace})
        meta = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                 "args": {"name": "ember"}}]
        meta += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": t,
                  "args": {"name": f"thread {t}"}} for t in tids]
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "displayTimeUnit": "ms",
                       "traceEvents": meta + trace}, f)

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path: str, metric: str):
        """Write ``frame;frame;... value`` lines (outermost frame first) for flame graphs."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: "
                             + str(self.supported_export_stacks_metrics()))
        tr = str.maketrans(" ;\t\n", "____")
        attr = metric.replace("cuda", "device").replace("xpu", "device") \
            .replace("privateuse1", "device")
        with open(path, "w") as f:
            for evt in self:
                if evt.stack:
                    v = getattr(evt, attr)
                    if int(v) > 0:
                        s = ";".join(e.translate(tr) for e in reversed(evt.stack))
                        f.write(f"{s} {int(v)}\n")

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """Average events over their keys (name, and optionally input shapes and the top
        ``group_by_stack_n`` stack entries): an ``EventList`` of ``FunctionEventAvg``."""
        if not self._tree_built:
            raise AssertionError("Expected tree to be built before calling key_averages")
        stats = defaultdict(FunctionEventAvg)
        for evt in self:
            key = [str(evt.key), str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_overload_name:
                key.append(str(evt.overload_name))
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += list(evt.stack or [])[:group_by_stack_n]
            stats[tuple(key)].add(evt)
        out = EventList(stats.values(), use_device=self._use_device,
                        profile_memory=self._profile_memory, with_flops=self._with_flops)
        for evt in out:
            evt.stack = list(evt.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                evt.input_shapes = ""
            if not group_by_overload_name:
                evt.overload_name = ""
        return out

    def total_average(self):
        """All events summed into one ``FunctionEventAvg`` with key ``"Total"``."""
        total = FunctionEventAvg()
        for evt in self:
            total += evt
            total.key = None
        total.key = "Total"
        return total


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    kb = 1024
    mb = 1024 * kb
    gb = 1024 * mb
    if abs(nbytes) >= gb:
        return f"{nbytes * 1.0 / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes * 1.0 / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes * 1.0 / kb:.2f} KB"
    return str(nbytes) + " B"


def _attr_formatter(name):
    return property(lambda self: _format_time(getattr(self, name)))


class FormattedTimesMixin:
    """``*_str`` formatted times and per-call averages from ``*_time_total`` and ``count``."""

    cpu_time_str = _attr_formatter("cpu_time")
    device_time_str = _attr_formatter("device_time")
    cpu_time_total_str = _attr_formatter("cpu_time_total")
    device_time_total_str = _attr_formatter("device_time_total")
    self_cpu_time_total_str = _attr_formatter("self_cpu_time_total")
    self_device_time_total_str = _attr_formatter("self_device_time_total")

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else 1.0 * self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else 1.0 * self.device_time_total / self.count

    @property
    def cuda_time(self):
        return self.device_time


class Interval:
    """A ``[start, end]`` range in microseconds."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


Kernel = namedtuple("Kernel", ["name", "device", "duration"])


class FunctionEvent(FormattedTimesMixin):
    """One recorded range: an operator, a backward node or a ``record_function`` block."""

    def __init__(self, id, name, thread, start_us, end_us, overload_name=None, fwd_thread=None,
                 input_shapes=None, stack=None, scope=0, use_device=None, cpu_memory_usage=0,
                 device_memory_usage=0, is_async=False, is_remote=False, sequence_nr=-1,
                 node_id=-1, device_type=DeviceType.CPU, device_index=0,
                 device_resource_id=None, is_legacy=False, flops=None, trace_name=None,
                 concrete_inputs=None, kwinputs=None, is_user_annotation=False,
                 is_python_function=False, args=None):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.is_python_function = is_python_function
        self.args = args
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1

    def append_kernel(self, name, device, duration):
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child):
        """Add a direct child (only direct children, so that self time is right)."""
        if not isinstance(child, FunctionEvent):
            raise AssertionError("Expected child to be a FunctionEvent")  # noqa: TRY004
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        if not isinstance(parent, FunctionEvent):
            raise AssertionError("Expected parent to be a FunctionEvent")  # noqa: TRY004
        self.cpu_parent = parent

    @property
    def self_cpu_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.device_memory_usage - sum(c.device_memory_usage for c in self.cpu_children)

    self_cuda_memory_usage = self_device_memory_usage

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us() if self.device_type == DeviceType.CPU else 0

    @property
    def self_cpu_time_total(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self):
        if self.is_async or not self.use_device:
            return 0
        if self.device_type == DeviceType.CPU:
            if self.is_legacy:   # legacy events hold their own kernels only
                return sum(k.duration for k in self.kernels)
            return sum(k.duration for k in self.kernels) + sum(
                c.device_time_total for c in self.cpu_children)
        return self.time_range.elapsed_us()

    cuda_time_total = device_time_total

    @property
    def self_device_time_total(self):
        if self.is_async or not self.use_device:
            return 0
        if self.device_type == DeviceType.CPU:
            return self.device_time_total - sum(c.device_time_total for c in self.cpu_children)
        return self.device_time_total

    self_cuda_time_total = self_device_time_total

    @property
    def key(self):
        return self.name

    def __repr__(self):
        dev = self.use_device
        return (
            f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
            f"device_type={self.device_type} node_id={self.node_id} "
            f"cpu_time={self.cpu_time_str} start_us={self.time_range.start} "
            f"end_us={self.time_range.end} "
            f"cpu_children={[c.id for c in self.cpu_children]!s} "
            f"{dev}_time={self.device_time_str} name={self.name} thread={self.thread} "
            f"input_shapes={self.input_shapes!s} cpu_memory_usage={self.cpu_memory_usage} "
            f"{dev}_memory_usage={self.device_memory_usage} is_async={self.is_async} "
            f"is_remote={self.is_remote} seq_nr={self.sequence_nr} is_legacy={self.is_legacy}>")


class FunctionEventAvg(FormattedTimesMixin):
    """Statistics summed over the events sharing one key."""

    def __init__(self) -> None:
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")  # noqa: TRY004
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        dev = "cuda" if not self.use_device else self.use_device
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str}  self_{dev}_time={self.self_device_time_total_str} "
            f"{dev}_time={self.device_time_str} input_shapes={self.input_shapes!s} "
            f"cpu_memory_usage={self.cpu_memory_usage} "
            f"{dev}_memory_usage={self.device_memory_usage}>")


class StringTable(defaultdict):
    """Names as given (PyTorch demangles C++ symbols here; ember has none)."""

    def __missing__(self, key):
        self[key] = key
        return key


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, with_flops=False,
                 profile_memory=False, top_level_events_only=False, time_unit=None):
    """PyTorch's summary table of ``events`` (``FunctionEvent`` or ``FunctionEventAvg``)."""
    if len(events) == 0:
        return ""
    has_device_time = any(e.self_device_time_total > 0 for e in events)
    has_device_mem = any(e.self_device_memory_usage > 0 for e in events)
    use_device = events[0].use_device
    if not use_device and has_device_time:
        raise RuntimeError("use_device is None, but there is device performance data.")
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0
                           for e in events)
    has_overload_names = any(e.overload_name is not None and len(e.overload_name) > 0
                             for e in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device") \
            .replace("privateuse1", "device")
        events = EventList(sorted(events, key=lambda e: getattr(e, attr), reverse=True),
                           use_device=use_device, profile_memory=profile_memory,
                           with_flops=with_flops)

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    width = 12
    stacks = [e.stack for e in events if e.stack is not None and len(e.stack) > 0]
    has_stack = len(stacks) > 0
    src_width = None
    if has_stack:
        src_width = max(max(len(s) for s in st) for st in stacks) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name"]
    if has_overload_names:
        headers.append("Overload Name")
    headers += ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    dev_name = use_device.upper() if use_device is not None else "None"
    if has_device_time:
        headers += [f"Self {dev_name}", f"Self {dev_name} %", f"{dev_name} total",
                    f"{dev_name} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if use_device and has_device_mem:
            headers += [f"{dev_name} Mem", f"Self {dev_name} Mem"]
    headers.append("# of Calls")
    append_node_id = any(e.node_id != -1 for e in events)
    if append_node_id:
        headers.append("Node ID")

    spacing = 2
    fmt = [""]
    sep = [""]
    line_len = [-spacing]

    def add_column(padding, text_dir=">"):
        fmt[0] += "{: " + text_dir + str(padding) + "}" + " " * spacing
        sep[0] += "-" * padding + " " * spacing
        line_len[0] += padding + spacing

    add_column(name_width)
    if has_overload_names:
        add_column(name_width)
    for _ in headers[1 + has_overload_names:]:
        add_column(width)
    if has_input_shapes:
        headers.append("Input Shapes")
        add_column(shapes_width)
    if has_stack:
        headers.append("Source Location")
        add_column(src_width, text_dir="<")
    flops_scale = 1.0
    if with_flops:
        raw = [e.flops for e in events if e.flops and e.flops > 0]
        if raw:
            names = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
            lg = max(0, min(math.log10(min(raw)) / 3, float(len(names) - 1)))
            flops_scale = pow(10, math.floor(lg) * -3.0)
            headers.append(f"Total {names[int(lg)]}")
            add_column(width)
        else:
            with_flops = False
    row_format, header_sep, line_length = fmt[0], sep[0], line_len[0]

    result = []

    def append(s):
        result.append(s)
        result.append("\n")

    sum_self_cpu = sum(e.self_cpu_time_total for e in events)
    sum_self_dev = sum(e.self_device_time_total for e in events if e.is_legacy)

    def unit(t, default):
        if time_unit == "s":
            return f"{t / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{t / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{t:.3f}us"
        return default

    def trim_path(path):
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    if header is not None:
        append("=" * line_length)
        append(header)
    if top_level_events_only:
        append("=" * line_length)
        append("This report only display top-level ops statistics")
    append(header_sep)
    append(row_format.format(*headers))
    append(header_sep)

    shown = 0
    for evt in events:
        if shown == row_limit:
            break
        if top_level_events_only and evt.cpu_parent is not None:
            continue
        shown += 1
        name = evt.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        evt.self_cpu_percent = _format_time_share(evt.self_cpu_time_total, sum_self_cpu)
        evt.total_cpu_percent = (_format_time_share(evt.cpu_time_total, sum_self_cpu)
                                 if not evt.is_async else 0)
        row = [name]
        if has_overload_names:
            ov = evt.overload_name or ""
            if max_name_column_width is not None and len(ov) >= max_name_column_width - 3:
                ov = ov[:max_name_column_width - 3] + "..."
            row.append(ov)
        row += [evt.self_cpu_percent,
                unit(evt.self_cpu_time_total, evt.self_cpu_time_total_str),
                evt.total_cpu_percent,
                unit(evt.cpu_time_total, evt.cpu_time_total_str),
                unit(evt.cpu_time, evt.cpu_time_str)]
        if has_device_time:
            evt.total_device_percent = _format_time_share(evt.self_device_time_total,
                                                          sum_self_dev)
            row += [unit(evt.self_device_time_total, evt.self_device_time_total_str),
                    evt.total_device_percent,
                    unit(evt.device_time_total, evt.device_time_total_str),
                    unit(evt.device_time, evt.device_time_str)]
        if profile_memory:
            row += [_format_memory(evt.cpu_memory_usage),
                    _format_memory(evt.self_cpu_memory_usage)]
            if use_device and has_device_mem:
                row += [_format_memory(evt.device_memory_usage),
                        _format_memory(evt.self_device_memory_usage)]
        row.append(evt.count)
        if append_node_id:
            row.append(evt.node_id)
        if has_input_shapes:
            row.append(str(evt.input_shapes)[:shapes_width])
        if has_stack:
            row.append(trim_path(evt.stack[0]) if evt.stack else "")
        if with_flops:
            row.append("--" if not evt.flops or evt.flops <= 0
                       else f"{evt.flops * flops_scale:8.3f}")
        append(row_format.format(*row))
        if has_stack:
            src_idx = headers.index("Source Location")
            for entry in (evt.stack or [])[1:]:
                cont = [""] * len(headers)
                cont[src_idx] = trim_path(entry)
                append(row_format.format(*cont))
            append(row_format.format(*([""] * len(headers))))

    append(header_sep)
    append(f"Self CPU time total: {unit(sum_self_cpu, _format_time(sum_self_cpu))}")
    if has_device_time:
        append(f"Self {dev_name} time total: {unit(sum_self_dev, _format_time(sum_self_dev))}")
    return "".join(result)
