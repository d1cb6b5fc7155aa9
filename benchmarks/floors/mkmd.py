import json

A = json.load(open("/tmp/fl_after.json"))
B = json.load(open("/tmp/fl_before.json"))
tc = A["tensor|np"]
fam = {
    "sum(1,keepdim)": "sum with dim (`y.sum(1, keepdim=True)`)",
    "mean(0)": "mean with dim (`y.mean(0)`)",
    "add bcast": "broadcast add (`(8,1) + (8,)`)",
    "t()": "transpose (`a.t()`)",
    "reshape(64) noncontig": "reshape of a transposed tensor (copy: clone + view)",
    "[idx]": "advanced indexing (`b[idx]`, int64)",
    "reshape(8,8)": "reshape (view)",
    "[1:5]": "slice (`b[1:5]`)",
    "unsqueeze(0)": "unsqueeze",
    "expand": "expand (`expand(2,4,8)`)",
    "[0]": "select (`x[0]`)",
    "cat": "cat of two (4,8)",
    "softmax(-1)": "softmax(-1)",
    "matmul": "small matmul (8x8 @ 8x8)",
    "amax(1,keepdim)": "amax with dim",
    "gt scalar": "compare with a number (`d > 0.1`)",
    "where": "where (mask, (8,8), (8,1))",
    "clamp": "clamp(-2.0, 2.0)",
    "gather": "gather(1, idx)",
    "mul scalar": "mul by a number",
    "add same": "add, same shape",
    "sum()": "full sum",
}
floor_calls = {
    "sum(1,keepdim)": "np.add.reduce",
    "mean(0)": "np.add.reduce + np.true_divide",
    "add bcast": "np.add",
    "t()": "ndarray.T",
    "reshape(64) noncontig": "np.ascontiguousarray + reshape",
    "[idx]": "a[idx]",
    "reshape(8,8)": "reshape",
    "[1:5]": "a[1:5]",
    "unsqueeze(0)": "a[None]",
    "expand": "np.ndarray(shape, dtype, buf, 0, strides)",
    "[0]": "a[0]",
    "cat": "np.concatenate",
    "softmax(-1)": "maximum.reduce, subtract, exp, add.reduce, divide",
    "matmul": "np.matmul",
    "amax(1,keepdim)": "np.maximum.reduce",
    "gt scalar": "np.greater",
    "where": "np.where",
    "clamp": "np.maximum + np.minimum",
    "gather": "bounds check (maximum.reduce) + a[ogrid key]",
    "mul scalar": "np.multiply",
    "add same": "np.add",
    "sum()": "np.add.reduce",
}
rows = []
print(
    "| family | torch | ember before | ember after | NumPy floor (calls) | floor + tensor | after / torch | Python above floor |"
)
print("|---|---:|---:|---:|---|---:|---:|---:|")
tt = tb = ta = tf = 0
for k, label in fam.items():
    ea, t = A[k + "|nograd"]
    eb, _ = B[k + "|nograd"]
    f = A[k + "|np"]
    tt += t
    tb += eb
    ta += ea
    tf += f + tc
    print(
        f"| {label} | {t:.2f} | {eb:.2f} | {ea:.2f} | {f:.2f} ({floor_calls[k]}) | {f + tc:.2f} | {ea / t:.2f}x | {ea - f - tc:.2f} |"
    )
print(
    f"| **sum of the 22 ops** | {tt:.1f} | {tb:.1f} | {ta:.1f} | | {tf:.1f} | {ta / tt:.2f}x | {ta - tf:.1f} |"
)
print()
print(
    "| family | torch | ember before | ember after | after / torch | grad-mode cost over no_grad (ember after / torch) |"
)
print("|---|---:|---:|---:|---:|---:|")
tt = tb = ta = 0
for k, label in fam.items():
    ea, t = A[k + "|grad"]
    eb, _ = B[k + "|grad"]
    na, nt = A[k + "|nograd"]
    tt += t
    tb += eb
    ta += ea
    print(
        f"| {label} | {t:.2f} | {eb:.2f} | {ea:.2f} | {ea / t:.2f}x | {ea - na:.2f} / {t - nt:.2f} |"
    )
print(f"| **sum** | {tt:.1f} | {tb:.1f} | {ta:.1f} | {ta / tt:.2f}x | |")
print("tensor", tc)
