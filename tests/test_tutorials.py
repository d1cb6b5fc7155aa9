"""PyTorch's own tutorials that use nn / optim / data, run unchanged on both libraries.

Each tutorial program is a function taking the library as ``torch`` (so ``import ember as torch``
is the only difference). Only random numbers are changed: they come from a shared NumPy stream
(``R``), and freshly built models get identical weights from it, so that both libraries compute
the same thing. What the programs print (model reprs, losses, tensors, sizes) is captured and
compared: text equal after 'torch' -> 'ember' and object addresses are normalised, numbers equal
to a relative 1e-4.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import random
import re
import tempfile
import uuid

import numpy as np
import pytest
import torch as _torch

import ember


class R:
    """The tutorials' random numbers, the same in both libraries."""

    def __init__(self, torch, seed: int = 0):
        self.torch = torch
        self.rng = np.random.default_rng(seed)

    def randn(self, *shape, requires_grad: bool = False):
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        t = self.torch.from_numpy(self.rng.standard_normal(shape).astype(np.float32))
        return t.requires_grad_(requires_grad)

    def rand(self, *shape):
        return self.torch.from_numpy(self.rng.random(shape).astype(np.float32))

    def init_(self, model) -> None:
        """Fresh uniform weights in PyTorch's default range, drawn in parameter order."""
        with self.torch.no_grad():
            for p in model.parameters():
                fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
                fan_in *= int(np.prod(p.shape[2:])) if p.dim() > 2 else 1
                bound = 1 / math.sqrt(fan_in)
                data = self.rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)
                p.copy_(self.torch.from_numpy(data))


def _run(program, torch, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = program(torch, R(torch), *args)
    return out.getvalue(), result


_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _normalise(text: str) -> str:
    text = re.sub(r"0x[0-9a-fA-F]+", "0xADDR", text)
    return text.replace("torch", "ember")


def _same_output(te: str, tt: str, rtol: float = 1e-4, atol: float = 1e-6) -> None:
    te, tt = _normalise(te), _normalise(tt)
    assert _NUM.sub("#", te) == _NUM.sub("#", tt), f"ember:\n{te}\ntorch:\n{tt}"
    ne = [float(x) for x in _NUM.findall(te)]
    nt = [float(x) for x in _NUM.findall(tt)]
    np.testing.assert_allclose(ne, nt, rtol=rtol, atol=atol)


def _both(program, *args, rtol: float = 1e-4, atol: float = 1e-6):
    out_e, res_e = _run(program, ember, *args)
    out_t, res_t = _run(program, _torch, *args)
    _same_output(out_e, out_t, rtol, atol)
    assert out_t.strip(), "the program printed nothing to compare"
    return res_e, res_t


def _np(x):
    return x.detach().numpy()


# ---- "Build the Neural Network" (beginner/basics/buildmodel_tutorial) ---------------------------

def buildmodel_tutorial(torch, R):
    nn = torch.nn

    device = (torch.accelerator.current_accelerator().type
              if torch.accelerator.is_available() else "cpu")
    print(f"Using {device} device")

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 512),
                nn.ReLU(),
                nn.Linear(512, 512),
                nn.ReLU(),
                nn.Linear(512, 10),
            )

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = NeuralNetwork().to(device)
    R.init_(model)
    print(model)

    X = R.rand(1, 28, 28)
    logits = model(X)
    pred_probab = nn.Softmax(dim=1)(logits)
    y_pred = pred_probab.argmax(1)
    print(f"Predicted class: {y_pred}")

    input_image = R.rand(3, 28, 28)
    print(input_image.size())
    flatten = nn.Flatten()
    flat_image = flatten(input_image)
    print(flat_image.size())
    layer1 = nn.Linear(in_features=28 * 28, out_features=20)
    R.init_(layer1)
    hidden1 = layer1(flat_image)
    print(hidden1.size())
    print(f"Before ReLU: {hidden1}\n\n")
    hidden1 = nn.ReLU()(hidden1)
    print(f"After ReLU: {hidden1}")

    seq_modules = nn.Sequential(flatten, layer1, nn.ReLU(), nn.Linear(20, 10))
    R.init_(seq_modules)
    input_image = R.rand(3, 28, 28)
    logits = seq_modules(input_image)
    softmax = nn.Softmax(dim=1)
    pred_probab = softmax(logits)
    print(pred_probab)

    print(f"Model structure: {model}\n\n")
    for name, param in model.named_parameters():
        print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")
    return pred_probab


def test_buildmodel_tutorial():
    pe, pt = _both(buildmodel_tutorial)
    np.testing.assert_allclose(_np(pe), _np(pt), rtol=1e-5, atol=1e-7)


# ---- "Optimizing Model Parameters" (beginner/basics/optimization_tutorial) ---------------------

def optimization_tutorial(torch, R):
    from_data = torch.utils.data
    nn = torch.nn
    # FashionMNIST cannot be downloaded here: random images of the same shape instead
    training_data = from_data.TensorDataset(R.rand(320, 1, 28, 28),
                                            torch.from_numpy(R.rng.integers(0, 10, 320)))
    test_data = from_data.TensorDataset(R.rand(96, 1, 28, 28),
                                        torch.from_numpy(R.rng.integers(0, 10, 96)))
    train_dataloader = from_data.DataLoader(training_data, batch_size=64)
    test_dataloader = from_data.DataLoader(test_data, batch_size=64)

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 512),
                nn.ReLU(),
                nn.Linear(512, 512),
                nn.ReLU(),
                nn.Linear(512, 10),
            )

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = NeuralNetwork()
    R.init_(model)

    learning_rate = 1e-3
    batch_size = 64
    epochs = 3

    def train_loop(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if batch % 2 == 0:  # the tutorial prints every 100 batches of 938
                loss, current = loss.item(), batch * batch_size + len(X)
                print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test_loop(dataloader, model, loss_fn):
        model.eval()
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")

    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    for t in range(epochs):
        print(f"Epoch {t+1}\n-------------------------------")
        train_loop(train_dataloader, model, loss_fn, optimizer)
        test_loop(test_dataloader, model, loss_fn)
    print("Done!")
    return model


def test_optimization_tutorial():
    me, mt = _both(optimization_tutorial)
    sd = mt.state_dict()
    for k, v in me.state_dict().items():
        np.testing.assert_allclose(_np(v), _np(sd[k]), rtol=1e-4, atol=1e-6, err_msg=k)


# ---- "Automatic Differentiation with torch.autograd" (beginner/basics/autogradqs_tutorial) ------

def autogradqs_tutorial(torch, R):
    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = R.randn(5, 3).requires_grad_()
    b = R.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    print(loss)

    print(f"Gradient function for z = {z.grad_fn}")
    print(f"Gradient function for loss = {loss.grad_fn}")

    loss.backward()
    print(w.grad)
    print(b.grad)

    z = torch.matmul(x, w) + b
    print(z.requires_grad)
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    print(z.requires_grad)

    z = torch.matmul(x, w) + b
    z_det = z.detach()
    print(z_det.requires_grad)

    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"First call\n{inp.grad}")
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nSecond call\n{inp.grad}")
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nCall after zeroing gradients\n{inp.grad}")
    return w.grad, b.grad


def test_autogradqs_tutorial():
    (we, be), (wt, bt) = _both(autogradqs_tutorial)
    np.testing.assert_allclose(_np(we), _np(wt), rtol=1e-6)
    np.testing.assert_allclose(_np(be), _np(bt), rtol=1e-6)


# ---- "Neural Networks" (beginner/blitz/neural_networks_tutorial): LeNet -----------------------

def neural_networks_tutorial(torch, R, flat: str):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            if flat == "flatten":
                x = torch.flatten(x, 1)
            else:  # the tutorial's earlier version
                x = x.view(-1, self.num_flat_features(x))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

        def num_flat_features(self, x):
            size = x.size()[1:]
            num_features = 1
            for s in size:
                num_features *= s
            return num_features

    net = Net()
    R.init_(net)
    print(net)

    params = list(net.parameters())
    print(len(params))
    print(params[0].size())  # conv1's .weight

    input = R.randn(1, 1, 32, 32)
    out = net(input)
    print(out)

    net.zero_grad()
    out.backward(R.randn(1, 10))

    output = net(input)
    target = R.randn(10)  # a dummy target, for example
    target = target.view(1, -1)  # make it the same shape as output
    criterion = nn.MSELoss()

    loss = criterion(output, target)
    print(loss)

    print(loss.grad_fn)  # MSELoss
    print(loss.grad_fn.next_functions[0][0])  # Linear
    print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # ReLU

    net.zero_grad()  # zeroes the gradient buffers of all parameters
    print('conv1.bias.grad before backward')
    print(net.conv1.bias.grad)
    loss.backward()
    print('conv1.bias.grad after backward')
    print(net.conv1.bias.grad)

    learning_rate = 0.01
    for f in net.parameters():
        f.data.sub_(f.grad.data * learning_rate)

    optimizer = optim.SGD(net.parameters(), lr=0.01)
    for _ in range(5):
        optimizer.zero_grad()  # zero the gradient buffers
        output = net(input)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()  # Does the update
        print(loss)
    return [p.grad for p in net.parameters()]


def _linear_graph_lines(text: str) -> str:
    # ember records nn.Linear as one fused node (PyTorch's addmm(bias, input, weight.t())), with
    # next_functions in (input, weight, bias) order and no TBackward0: the tutorial's third
    # grad_fn print differs; test_linear_graph_structure records that divergence
    lines = text.split("\n")
    i = lines.index("conv1.bias.grad before backward")
    return "\n".join(lines[:i - 1] + lines[i:])


@pytest.mark.parametrize("flat", ["flatten", "num_flat_features"])
def test_neural_networks_tutorial(flat):
    out_e, ge = _run(neural_networks_tutorial, ember, flat)
    out_t, gt = _run(neural_networks_tutorial, _torch, flat)
    _same_output(_linear_graph_lines(out_e), _linear_graph_lines(out_t))
    for a, b in zip(ge, gt):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-6)


# ---- "Learning PyTorch with Examples" (beginner/examples_nn) ----------------------------------

def two_layer_net_nn(torch, R, optimizer: str):
    N, D_in, H, D_out = 64, 100, 50, 10
    x = R.randn(N, D_in)
    y = R.randn(N, D_out)
    model = torch.nn.Sequential(
        torch.nn.Linear(D_in, H),
        torch.nn.ReLU(),
        torch.nn.Linear(H, D_out),
    )
    R.init_(model)
    loss_fn = torch.nn.MSELoss(reduction='sum')
    if optimizer == "manual":
        learning_rate = 1e-4
        for t in range(100):
            y_pred = model(x)
            loss = loss_fn(y_pred, y)
            if t % 10 == 9:
                print(t, loss.item())
            model.zero_grad()
            loss.backward()
            with torch.no_grad():
                for param in model.parameters():
                    param -= learning_rate * param.grad
        return model
    learning_rate = 1e-3 if optimizer == "RMSprop" else 1e-4
    opt = getattr(torch.optim, optimizer)(model.parameters(), lr=learning_rate)
    for t in range(100):
        y_pred = model(x)
        loss = loss_fn(y_pred, y)
        if t % 10 == 9:
            print(t, loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


@pytest.mark.parametrize("optimizer", ["manual", "Adam", "RMSprop"])
def test_two_layer_net_nn(optimizer):
    me, mt = _both(two_layer_net_nn, optimizer)
    for a, b in zip(me.parameters(), mt.parameters()):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-6)


def polynomial_nn(torch, R, optimizer: str):
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)

    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    R.init_(model)
    loss_fn = torch.nn.MSELoss(reduction='sum')
    if optimizer == "manual":
        learning_rate = 1e-6
        for t in range(500):
            y_pred = model(xx)
            loss = loss_fn(y_pred, y)
            if t % 100 == 99:
                print(t, loss.item())
            model.zero_grad()
            loss.backward()
            with torch.no_grad():
                for param in model.parameters():
                    param -= learning_rate * param.grad
    else:
        learning_rate = 1e-3
        opt = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
        for t in range(500):
            y_pred = model(xx)
            loss = loss_fn(y_pred, y)
            if t % 100 == 99:
                print(t, loss.item())
            opt.zero_grad()
            loss.backward()
            opt.step()

    linear_layer = model[0]
    print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
          f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
    return model


@pytest.mark.parametrize("optimizer", ["manual", "RMSprop"])
def test_polynomial_nn(optimizer):
    me, mt = _both(polynomial_nn, optimizer)
    for a, b in zip(me.parameters(), mt.parameters()):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-6)


def polynomial_module(torch, R):
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(R.randn(()))
            self.b = torch.nn.Parameter(R.randn(()))
            self.c = torch.nn.Parameter(R.randn(()))
            self.d = torch.nn.Parameter(R.randn(()))

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return (f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + '
                    f'{self.d.item()} x^3')

    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    model = Polynomial3()
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    for t in range(500):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f'Result: {model.string()}')
    print(model)
    print([n for n, _ in model.named_parameters()])
    return model


def test_polynomial_module():
    me, mt = _both(polynomial_module)
    for a, b in zip(me.parameters(), mt.parameters()):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4)


def dynamic_net(torch, R):
    rand = random.Random(0)

    class DynamicNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(R.randn(()))
            self.b = torch.nn.Parameter(R.randn(()))
            self.c = torch.nn.Parameter(R.randn(()))
            self.d = torch.nn.Parameter(R.randn(()))
            self.e = torch.nn.Parameter(R.randn(()))

        def forward(self, x):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, rand.randint(4, 6)):
                y = y + self.e * x ** exp  # the same parameter reused: weight sharing
            return y

        def string(self):
            return (f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + '
                    f'{self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?')

    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    model = DynamicNet()
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    for t in range(600):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 100 == 99:
            print(t, loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f'Result: {model.string()}')
    return model


def test_dynamic_net():
    me, mt = _both(dynamic_net)
    for a, b in zip(me.parameters(), mt.parameters()):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4)


# ---- double backward (intermediate/custom_function_double_backward_tutorial) -------------------

def double_backward_tutorial(torch, R):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return grad_out * 2 * x

    x = R.rand(3, 3).to(dtype=torch.double).requires_grad_()
    print(torch.autograd.gradcheck(Square.apply, x))
    print(torch.autograd.gradgradcheck(Square.apply, x))

    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = torch.exp(x)
            expnegx = torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    def sinh(x):
        return Sinh.apply(x)[0]

    print(torch.autograd.gradcheck(sinh, x))
    print(torch.autograd.gradgradcheck(sinh, x))

    # the nn part: a gradient penalty (double backward through Linear/Tanh/Square) in training
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    R.init_(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    inp = R.randn(16, 4, requires_grad=True)
    target = R.randn(16, 1)
    for step in range(20):
        out = model(inp)
        loss = torch.nn.functional.mse_loss(out, target)
        g, = torch.autograd.grad(loss, inp, create_graph=True)
        penalty = Square.apply(g.norm(2, dim=1) - 1).mean()
        total = loss + 0.1 * penalty
        opt.zero_grad()
        total.backward()
        opt.step()
        if step % 5 == 4:
            print(step, total.item(), penalty.item(), g.grad_fn)
    return [p.grad for p in model.parameters()]


def test_double_backward_tutorial():
    out_e, ge = _run(double_backward_tutorial, ember)
    out_t, gt = _run(double_backward_tutorial, _torch)
    # the input gradient's node: PyTorch's mm of the addmm backward, ember's fused linear
    # backward (see test_linear_graph_structure)
    _same_output(re.sub(r"<\w+Backward0", "<Node", out_e), re.sub(r"<\w+Backward0", "<Node", out_t))
    for a, b in zip(ge, gt):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-7)


# ---- saved tensor hooks (intermediate/autograd_saved_tensors_hooks_tutorial) -------------------

def saved_tensors_hooks_tutorial(torch, R, tmp_dir):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(10, 100), nn.GELU(), nn.Linear(100, 10))
    R.init_(model)
    x = R.randn(4, 10, requires_grad=True)

    # the reference gradients, without hooks
    model(x).pow(2).sum().backward()
    ref = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    x.grad = None

    packed = []

    def pack_hook(t):
        packed.append(tuple(t.shape))
        return t

    def unpack_hook(t):
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = model(x)
    y.pow(2).sum().backward()
    print(sorted(packed))
    print(all(torch.equal(p.grad, r) for p, r in zip(model.parameters(), ref)))
    model.zero_grad()

    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        y = model(x)
    y.pow(2).sum().backward()
    print(all(torch.equal(p.grad, r) for p, r in zip(model.parameters(), ref)))
    model.zero_grad()

    class SelfDeletingTempFile():
        def __init__(self):
            self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

        def __del__(self):
            os.remove(self.name)

    def pack_to_disk(tensor):
        temp_file = SelfDeletingTempFile()
        torch.save(tensor, temp_file.name)
        return temp_file

    def unpack_from_disk(temp_file):
        return torch.load(temp_file.name)

    with torch.autograd.graph.saved_tensors_hooks(pack_to_disk, unpack_from_disk):
        y = model(x)
    print(len(os.listdir(tmp_dir)) > 0)
    y.pow(2).sum().backward()
    del y
    print(all(torch.equal(p.grad, r) for p, r in zip(model.parameters(), ref)))

    # only save on disk tensors that have size >= 1000 (the tutorial's variant)
    SAVE_ON_DISK_THRESHOLD = 1000

    def pack_hook_thresh(x):
        if x.numel() < SAVE_ON_DISK_THRESHOLD:
            return x.detach()
        return pack_to_disk(x)

    def unpack_hook_thresh(x):
        if isinstance(x, torch.Tensor):
            return x
        return unpack_from_disk(x)

    model.zero_grad()
    with torch.autograd.graph.saved_tensors_hooks(pack_hook_thresh, unpack_hook_thresh):
        y = model(x)
    y.pow(2).sum().backward()
    print(all(torch.allclose(p.grad, r) for p, r in zip(model.parameters(), ref)))
    return ref


def test_saved_tensors_hooks_tutorial():
    with tempfile.TemporaryDirectory() as de, tempfile.TemporaryDirectory() as dt:
        out_e, re_ = _run(saved_tensors_hooks_tutorial, ember, de)
        out_t, rt = _run(saved_tensors_hooks_tutorial, _torch, dt)
        assert os.listdir(de) == [] and os.listdir(dt) == []
    _same_output(out_e, out_t)
    assert "False" not in out_t
    for a, b in zip(re_, rt):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-6)


@pytest.mark.xfail(strict=True, reason="ember's nn.Linear is one fused node: next_functions are "
                   "(input, weight, bias) with no TBackward0, and a create_graph input gradient "
                   "comes from that node's backward rather than PyTorch's MmBackward0")
def test_linear_graph_structure():
    def graph(torch):
        lin = torch.nn.Linear(3, 2)
        x = torch.ones(4, 3, requires_grad=True)
        y = lin(x.relu())
        g, = torch.autograd.grad(lin(x).sum(), x, create_graph=True)
        return ([type(n).__name__ for n, _ in y.grad_fn.next_functions], type(g.grad_fn).__name__)
    assert graph(ember) == graph(_torch)


def quickstart_device(torch, R):
    # the older tutorials' device choice, and the current one
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"Using {device} device", torch.cuda.device_count())
    acc = torch.accelerator.current_accelerator()
    print(acc, torch.accelerator.device_count())
    model = torch.nn.Linear(2, 2).to(device)
    print(model.weight.device, R.rand(2, 2).to(device).device)


def test_quickstart_device():
    _both(quickstart_device)


# ---- "Tensors" (beginner/basics/tensorqs_tutorial) ---------------------------------------------

def tensorqs_tutorial(torch, R):
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    np_array = np.array(data)
    x_np = torch.from_numpy(np_array)
    print(x_np)
    x_ones = torch.ones_like(x_data)  # retains the properties of x_data
    print(f"Ones Tensor: \n {x_ones} \n")
    x_rand = torch.rand_like(x_data, dtype=torch.float)  # overrides the datatype of x_data
    assert x_rand.dtype == torch.float32 and x_rand.shape == x_data.shape
    x_rand = R.rand(*x_data.shape)
    print(f"Random Tensor: \n {x_rand} \n")

    shape = (2, 3,)
    rand_tensor = torch.rand(shape)
    assert rand_tensor.shape == shape
    rand_tensor = R.rand(*shape)
    ones_tensor = torch.ones(shape)
    zeros_tensor = torch.zeros(shape)
    print(f"Random Tensor: \n {rand_tensor} \n")
    print(f"Ones Tensor: \n {ones_tensor} \n")
    print(f"Zeros Tensor: \n {zeros_tensor}")

    tensor = R.rand(3, 4)
    print(f"Shape of tensor: {tensor.shape}")
    print(f"Datatype of tensor: {tensor.dtype}")
    print(f"Device tensor is stored on: {tensor.device}")
    # We move our tensor to the current accelerator if available
    if torch.accelerator.is_available():
        tensor = tensor.to(torch.accelerator.current_accelerator())
    # the tutorial's older form
    if torch.cuda.is_available():
        tensor = tensor.to("cuda")

    tensor = torch.ones(4, 4)
    print(f"First row: {tensor[0]}")
    print(f"First column: {tensor[:, 0]}")
    print(f"Last column: {tensor[..., -1]}")
    tensor[:, 1] = 0
    print(tensor)

    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    print(t1)

    # This computes the matrix multiplication between two tensors. y1, y2, y3 will have the
    # same value
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)
    print(y1, y2, y3)
    # This computes the element-wise product. z1, z2, z3 will have the same value
    z1 = tensor * tensor
    z2 = tensor.mul(tensor)
    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    print(z1, z2, z3)

    agg = tensor.sum()
    agg_item = agg.item()
    print(agg_item, type(agg_item))

    print(f"{tensor} \n")
    tensor.add_(5)
    print(tensor)

    t = torch.ones(5)
    print(f"t: {t}")
    n = t.numpy()
    print(f"n: {n}")
    t.add_(1)
    print(f"t: {t}")
    print(f"n: {n}")

    n = np.ones(5)
    t = torch.from_numpy(n)
    np.add(n, 1, out=n)
    print(f"t: {t}")
    print(f"n: {n}")
    return y3, z3


def test_tensorqs_tutorial():
    (ye, ze), (yt, zt) = _both(tensorqs_tutorial)
    np.testing.assert_array_equal(_np(ye), _np(yt))
    np.testing.assert_array_equal(_np(ze), _np(zt))


# ---- "Tensors" of the 60-minute blitz (the older beginner/blitz/tensor_tutorial) ---------------

def blitz_tensor_tutorial(torch, R):
    x = torch.empty(5, 3)
    assert x.shape == (5, 3)
    x = torch.zeros(5, 3, dtype=torch.long)
    print(x)
    x = torch.tensor([5.5, 3])
    print(x)
    x = x.new_ones(5, 3, dtype=torch.double)  # new_* methods take in sizes
    print(x)
    x = torch.randn_like(x, dtype=torch.float)  # override dtype!
    assert x.dtype == torch.float32
    x = R.randn(5, 3)
    print(x)
    print(x.size())
    y = R.rand(5, 3)
    print(x + y)
    print(torch.add(x, y))
    result = torch.empty(5, 3)
    torch.add(x, y, out=result)
    print(result)
    y.add_(x)
    print(y)
    print(x[:, 1])
    x = R.randn(4, 4)
    y = x.view(16)
    z = x.view(-1, 8)  # the size -1 is inferred from other dimensions
    print(x.size(), y.size(), z.size())
    x = R.randn(1)
    print(x)
    print(x.item())
    a = torch.ones(5)
    print(a)
    b = a.numpy()
    print(b)
    a.add_(1)
    print(a)
    print(b)
    a = np.ones(5)
    b = torch.from_numpy(a)
    np.add(a, 1, out=a)
    print(a)
    print(b)
    # let us run this cell only if CUDA is available
    # We will use ``torch.device`` objects to move tensors in and out of GPU
    if torch.cuda.is_available():
        device = torch.device("cuda")          # a CUDA device object
        y = torch.ones_like(x, device=device)  # directly create a tensor on GPU
        x = x.to(device)                       # or just use strings ``.to("cuda")``
        z = x + y
        print(z)
        print(z.to("cpu", torch.double))       # ``.to`` can also change dtype together!
    return result


def test_blitz_tensor_tutorial():
    re_, rt = _both(blitz_tensor_tutorial)
    np.testing.assert_array_equal(_np(re_), _np(rt))


# ---- "A Gentle Introduction to torch.autograd" (beginner/blitz/autograd_tutorial) --------------

def blitz_autograd_tutorial(torch, R):
    a = torch.tensor([2., 3.], requires_grad=True)
    b = torch.tensor([6., 4.], requires_grad=True)
    Q = 3 * a**3 - b**2
    external_grad = torch.tensor([1., 1.])
    Q.backward(gradient=external_grad)
    # check if collected gradients are correct
    print(9 * a**2 == a.grad)
    print(-2 * b == b.grad)

    x = R.rand(5, 5)
    y = R.rand(5, 5)
    z = torch.rand((5, 5), requires_grad=True)
    a = x + y
    print(f"Does `a` require gradients?: {a.requires_grad}")
    b = x + z
    print(f"Does `b` require gradients?: {b.requires_grad}")

    # the older version of the page
    x = torch.ones(2, 2, requires_grad=True)
    print(x)
    y = x + 2
    print(y)
    print(y.grad_fn)
    z = y * y * 3
    out = z.mean()
    print(z, out)
    a = R.randn(2, 2)
    a = ((a * 3) / (a - 1))
    print(a.requires_grad)
    a.requires_grad_(True)
    print(a.requires_grad)
    b = (a * a).sum()
    print(b.grad_fn)
    out.backward()
    print(x.grad)
    x = R.randn(3, requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    print(y)
    v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
    y.backward(v)
    print(x.grad)
    print(x.requires_grad)
    print((x ** 2).requires_grad)
    with torch.no_grad():
        print((x ** 2).requires_grad)
    print(x.requires_grad)
    y = x.detach()
    print(y.requires_grad)
    print(x.eq(y).all())
    return x.grad


def test_blitz_autograd_tutorial():
    ge, gt = _both(blitz_autograd_tutorial)
    np.testing.assert_array_equal(_np(ge), _np(gt))


# ---- "Learning PyTorch with Examples": Tensors, Autograd, custom Function -----------------------

def polynomial_tensor(torch, R):
    dtype = torch.float
    device = torch.device("cpu")
    # device = torch.device("cuda:0") # Uncomment this to run on GPU

    # Create random input and output data
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)

    # Randomly initialize weights
    a = torch.randn((), device=device, dtype=dtype)
    b = torch.randn((), device=device, dtype=dtype)
    c = torch.randn((), device=device, dtype=dtype)
    d = torch.randn((), device=device, dtype=dtype)
    a, b, c, d = (R.randn(()) for _ in range(4))

    learning_rate = 1e-6
    for t in range(2000):
        # Forward pass: compute predicted y
        y_pred = a + b * x + c * x ** 2 + d * x ** 3

        # Compute and print loss
        loss = (y_pred - y).pow(2).sum().item()
        if t % 100 == 99:
            print(t, loss)

        # Backprop to compute gradients of a, b, c, d with respect to loss
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()

        # Update weights using gradient descent
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d

    print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')


def test_polynomial_tensor():
    _both(polynomial_tensor)


def polynomial_autograd(torch, R):
    dtype = torch.float
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_default_device(device)

    # Create Tensors to hold input and outputs.
    # By default, requires_grad=False, which indicates that we do not need to
    # compute gradients with respect to these Tensors during the backward pass.
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)

    # Create random Tensors for weights. For a third order polynomial, we need
    # 4 weights: y = a + b x + c x^2 + d x^3
    # Setting requires_grad=True indicates that we want to compute gradients with
    # respect to these Tensors during the backward pass.
    a = torch.randn((), dtype=dtype, requires_grad=True)
    b = torch.randn((), dtype=dtype, requires_grad=True)
    c = torch.randn((), dtype=dtype, requires_grad=True)
    d = torch.randn((), dtype=dtype, requires_grad=True)
    a, b, c, d = (R.randn((), requires_grad=True) for _ in range(4))

    learning_rate = 1e-6
    for t in range(2000):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad

            # Manually zero the gradients after updating weights
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None

    print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
    print(torch.get_default_device())


def test_polynomial_autograd():
    try:
        _both(polynomial_autograd)
    finally:
        ember.set_default_device(None)
        _torch.set_default_device(None)


def polynomial_custom_function(torch, R):
    class LegendrePolynomial3(torch.autograd.Function):
        """
        We can implement our own custom autograd Functions by subclassing
        torch.autograd.Function and implementing the forward and backward passes
        which operate on Tensors.
        """

        @staticmethod
        def forward(ctx, input):
            """
            In the forward pass we receive a Tensor containing the input and return
            a Tensor containing the output. ctx is a context object that can be used
            to stash information for backward computation. You can cache arbitrary
            objects for use in the backward pass using the ctx.save_for_backward method.
            """
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            """
            In the backward pass we receive a Tensor containing the gradient of the loss
            with respect to the output, and we need to compute the gradient of the loss
            with respect to the input.
            """
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    dtype = torch.float
    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() \
        else torch.device("cpu")
    # the older form of the page
    device = torch.device("cuda:0") if torch.cuda.is_available() else device

    # Create Tensors to hold input and outputs.
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)

    # Create random Tensors for weights. For this example, we need
    # 4 weights: y = a + b * P3(c + d * x), these weights need to be initialized
    # not too far from the correct result to ensure convergence.
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

    learning_rate = 5e-6
    for t in range(2000):
        # To apply our Function, we use Function.apply method. We alias this as 'P3'.
        P3 = LegendrePolynomial3.apply

        # Forward pass: compute predicted y using operations; we compute
        # P3 using our custom autograd operation.
        y_pred = a + b * P3(c + d * x)

        # Compute and print loss
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, loss.item())

        # Use autograd to compute the backward pass.
        loss.backward()

        # Update weights using gradient descent
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad

            # Manually zero the gradients after updating weights
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None

    print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
    print(y_pred.grad_fn, y_pred.grad_fn.next_functions[1][0].next_functions)


def test_polynomial_custom_function():
    _both(polynomial_custom_function)
