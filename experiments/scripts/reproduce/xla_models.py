"""Compiles real models with JAX on the CPU and keeps XLA's buffer assignment of each.

    .venv/bin/python experiments/scripts/reproduce/xla_models.py OUT_DIR [--quick] [--only NAME,...]

Needs JAX (`bash .ci/install-deps tests` puts it in the project's .venv). Each model is a
function of plain jax.numpy and lax, lowered from the shapes of its arguments and compiled,
never run; XLA dumps its optimized module into OUT_DIR/NAME/ (OUT_DIR/models.csv names
each model's kind and the JAX that compiled it), among them the buffer
assignment (`*buffer-assignment.txt`) and the live ranges of its values
(`*live-range.txt`) that experiments/scripts/reproduce/xla_buffers.py reads. --quick compiles the
models at a tenth of their width.
"""

import argparse
import os
import subprocess
import sys


def models(scale):
    """name -> (kind, function, argument shapes): the models, at widths divided by `scale`."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    f32 = jnp.float32

    def w(n):
        return max(8, n // scale)

    def spec(*shape):
        return jax.ShapeDtypeStruct(shape, f32)

    def sgd(loss):
        # A training step: the loss's gradient, then each parameter moved against it.
        def step(params, *batch):
            grads = jax.grad(loss)(params, *batch)
            return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
        return step

    # MLP: four dense layers.
    mlp_dims = [w(1024)] * 5
    mlp_params = [(spec(a, b), spec(b)) for a, b in zip(mlp_dims, mlp_dims[1:])]

    def mlp(params, x):
        for wt, b in params:
            x = jax.nn.relu(x @ wt + b)
        return x

    def mlp_loss(params, x, y):
        return jnp.mean((mlp(params, x) - y) ** 2)

    # CNN: a residual network; each stage a strided convolution, then a block of two convolutions
    # with batch normalization added back to its input, then a dense classifier.
    channels = [3, w(64), w(128), w(256)]
    image = 32
    cnn_params = [[spec(3, 3, a, b), spec(3, 3, b, b), spec(3, 3, b, b)] for a, b in zip(channels, channels[1:])] + \
        [spec(channels[-1], 10)]

    def conv(x, k, stride=1):
        return lax.conv_general_dilated(x, k, (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def batch_norm(x):
        mean = x.mean((0, 1, 2))
        return (x - mean) * lax.rsqrt(((x - mean) ** 2).mean((0, 1, 2)) + 1e-5)

    def cnn(params, x):
        for down, k1, k2 in params[:-1]:
            x = jax.nn.relu(batch_norm(conv(x, down, 2)))
            x = jax.nn.relu(x + batch_norm(conv(jax.nn.relu(batch_norm(conv(x, k1))), k2)))
        return x.mean((1, 2)) @ params[-1]

    def cnn_loss(params, x, labels):
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(cnn(params, x)) * labels, axis=-1))

    # Transformer: pre-norm encoder layers of multi-head attention and an MLP.
    d, heads, seq, layers = w(512), 8, 128, 4
    block = {"qkv": spec(d, 3 * d), "out": spec(d, d), "up": spec(d, 4 * d), "down": spec(4 * d, d)}
    tf_params = [dict(block) for _ in range(layers)]

    def norm(x):
        return (x - x.mean(-1, keepdims=True)) * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)

    def transformer(params, x):
        b = x.shape[0]
        for p in params:
            q, k, v = jnp.split(norm(x) @ p["qkv"], 3, axis=-1)
            q, k, v = (t.reshape(b, seq, heads, d // heads) for t in (q, k, v))
            att = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / (d // heads) ** 0.5, axis=-1)
            x = x + jnp.einsum("bhqk,bkhd->bqhd", att, v).reshape(b, seq, d) @ p["out"]
            x = x + jax.nn.gelu(norm(x) @ p["up"]) @ p["down"]
        return x

    def transformer_loss(params, x):
        return jnp.mean(transformer(params, x) ** 2)

    def transformer_remat_loss(params, x):
        # Each layer recomputed in the backward pass rather than its activations kept.
        for p in params:
            x = jax.checkpoint(lambda x, p: transformer([p], x))(x, p)
        return jnp.mean(x ** 2)

    # LSTM over a sequence with lax.scan: a loop XLA compiles as a while.
    hidden, steps = w(512), 64
    lstm_params = {"wx": spec(hidden, 4 * hidden), "wh": spec(hidden, 4 * hidden), "head": spec(hidden, hidden)}

    def lstm(params, xs):
        def cell(carry, x):
            h, c = carry
            i, f, g, o = jnp.split(x @ params["wx"] + h @ params["wh"], 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        zeros = jnp.zeros((xs.shape[1], hidden), f32)
        _, hs = lax.scan(cell, (zeros, zeros), xs)
        return hs @ params["head"]

    def lstm_loss(params, xs):
        return jnp.mean(lstm(params, xs) ** 2)

    # Decoding one token against a KV cache: serving-time inference.
    cache_len = 512

    def decode(params, x, cache_k, cache_v):
        b = x.shape[0]
        for layer, p in enumerate(params):
            q, k, v = jnp.split(norm(x) @ p["qkv"], 3, axis=-1)
            keys = jnp.concatenate([cache_k[layer], k[:, None, :]], axis=1).reshape(b, cache_len + 1, heads, d // heads)
            values = jnp.concatenate([cache_v[layer], v[:, None, :]], axis=1).reshape(b, cache_len + 1, heads, d // heads)
            att = jax.nn.softmax(jnp.einsum("bhd,bkhd->bhk", q.reshape(b, heads, d // heads), keys), axis=-1)
            x = x + jnp.einsum("bhk,bkhd->bhd", att, values).reshape(b, d) @ p["out"]
            x = x + jax.nn.gelu(norm(x) @ p["up"]) @ p["down"]
        return x

    batch = 64
    return {
        "mlp_inference": ("MLP inference", mlp, (mlp_params, spec(batch, mlp_dims[0]))),
        "mlp_training_step": ("MLP training step", sgd(mlp_loss),
                              (mlp_params, spec(batch, mlp_dims[0]), spec(batch, mlp_dims[-1]))),
        "cnn_inference": ("residual CNN inference", cnn, (cnn_params, spec(batch, image, image, 3))),
        "cnn_training_step": ("residual CNN training step", sgd(cnn_loss), (cnn_params, spec(batch, image, image, 3), spec(batch, 10))),
        "transformer_inference": ("transformer encoder inference", transformer, (tf_params, spec(8, seq, d))),
        "transformer_training_step": ("transformer encoder training step", sgd(transformer_loss),
                                      (tf_params, spec(8, seq, d))),
        "transformer_remat_training_step": ("transformer encoder training step with rematerialization",
                                            sgd(transformer_remat_loss), (tf_params, spec(8, seq, d))),
        "lstm_scan_training_step": ("LSTM (lax.scan) training step", sgd(lstm_loss), (lstm_params, spec(steps, 32, hidden))),
        "kv_cache_decode": ("transformer decoding a token against a KV cache", decode,
                            (tf_params, spec(16, d), spec(layers, 16, cache_len, d), spec(layers, 16, cache_len, d))),
    }


def compile_one(name, out_dir, scale):
    import jax
    kind, function, arguments = models(scale)[name]
    function.__name__ = name  # the dumped module is named jit_NAME
    jax.jit(function).lower(*arguments).compile()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("out_dir")
    parser.add_argument("--quick", action="store_true", help="models at a tenth of their width")
    parser.add_argument("--only", help="NAME,...: these models only")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    scale = 10 if args.quick else 1
    if args.child:
        compile_one(args.child, args.out_dir, scale)
        return 0
    table = models(scale)
    names = list(table)
    if args.only:
        unknown = [n for n in args.only.split(",") if n not in names]
        if unknown:
            sys.exit(f"xla_models.py: no model named {', '.join(unknown)} (there are: {', '.join(names)})")
        names = args.only.split(",")
    import jax
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "models.csv"), "w") as f:
        f.write("model,kind,jax\n")
        for name in names:
            f.write(f"{name},{table[name][0]},{jax.__version__}\n")
    for name in names:
        # One process a model: XLA reads its dump flags once, when its CPU client starts.
        folder = os.path.join(args.out_dir, name)
        os.makedirs(folder, exist_ok=True)
        env = dict(os.environ, JAX_PLATFORMS="cpu",
                   XLA_FLAGS=f"--xla_dump_to={folder} --xla_dump_hlo_module_re=jit_{name}$")
        command = [sys.executable, __file__, args.out_dir, "--child", name] + (["--quick"] if args.quick else [])
        subprocess.run(command, env=env, check=True)
        print(f"xla_models.py: {name} compiled into {folder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
