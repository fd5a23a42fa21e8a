"""Builds the ONNX graph of a BERT sentence-embedding model (all-MiniLM-L6-v2 and its kin) from its
safetensors weights and config.json, with sentence-transformers' mean pooling and L2 normalization inside
the graph: inputs input_ids and attention_mask (int64 [batch, tokens]), output sentence_embedding
(float32 [batch, hidden], unit length). Token types are all zero (one segment), so their embedding is a
constant folded into the word embeddings' sum.

Written with the `onnx` package's helpers, so fetching the model needs neither PyTorch nor a model hub:
the math follows Hugging Face's BertModel (post-layer-norm encoder, exact erf GELU).

usage: build_onnx.py MODEL_DIR OUT.onnx            (fp32)
       build_onnx.py MODEL_DIR OUT.onnx --random H L HEADS FFN VOCAB   (a tiny random BERT, for tests)
"""
import json
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization is a single op from 17 on


def read_safetensors(path):
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        data = f.read()
    kinds = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype=kinds[meta["dtype"]]).reshape(meta["shape"]).astype(
            np.float32 if meta["dtype"] != "I64" else np.int64
        )
    return tensors


def random_bert(hidden, layers, heads, ffn, vocab, positions=512):
    rng = np.random.default_rng(7)
    w = lambda *shape: (rng.standard_normal(shape) * 0.05).astype(np.float32)
    ones = lambda n: (1 + rng.standard_normal(n) * 0.05).astype(np.float32)
    t = {
        "embeddings.word_embeddings.weight": w(vocab, hidden),
        "embeddings.position_embeddings.weight": w(positions, hidden),
        "embeddings.token_type_embeddings.weight": w(2, hidden),
        "embeddings.LayerNorm.weight": ones(hidden),
        "embeddings.LayerNorm.bias": w(hidden),
    }
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for part in ("query", "key", "value"):
            t[p + f"attention.self.{part}.weight"] = w(hidden, hidden)
            t[p + f"attention.self.{part}.bias"] = w(hidden)
        t[p + "attention.output.dense.weight"] = w(hidden, hidden)
        t[p + "attention.output.dense.bias"] = w(hidden)
        t[p + "attention.output.LayerNorm.weight"] = ones(hidden)
        t[p + "attention.output.LayerNorm.bias"] = w(hidden)
        t[p + "intermediate.dense.weight"] = w(ffn, hidden)
        t[p + "intermediate.dense.bias"] = w(ffn)
        t[p + "output.dense.weight"] = w(hidden, ffn)
        t[p + "output.dense.bias"] = w(hidden)
        t[p + "output.LayerNorm.weight"] = ones(hidden)
        t[p + "output.LayerNorm.bias"] = w(hidden)
    config = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads, "layer_norm_eps": 1e-12}
    return t, config


class Graph:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, kind, inputs, **attrs):
        self.count += 1
        out = f"{kind.lower()}_{self.count}"
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out


def build(t, config):
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    g = Graph()

    def linear(x, prefix):
        weight = g.const(prefix + ".weight", t[prefix + ".weight"].T.copy())
        return g.op("Add", [g.op("MatMul", [x, weight]), g.const(prefix + ".bias", t[prefix + ".bias"])])

    def layer_norm(x, prefix):
        scale, bias = g.const(prefix + ".weight", t[prefix + ".weight"]), g.const(prefix + ".bias", t[prefix + ".bias"])
        return g.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)

    split_heads = g.const("split_heads", np.array([0, 0, heads, head], dtype=np.int64))
    merge_heads = g.const("merge_heads", np.array([0, 0, hidden], dtype=np.int64))

    # Embeddings: word + position + token type 0, then layer norm.
    words = g.op("Gather", [g.const("embeddings.word_embeddings.weight", t["embeddings.word_embeddings.weight"]), "input_ids"])
    length = g.op("Gather", [g.op("Shape", ["input_ids"]), g.const("one", np.array(1, dtype=np.int64))], axis=0)
    positions = g.op("Range", [g.const("zero", np.array(0, dtype=np.int64)), length, "one"])
    position_table = g.const("embeddings.position_embeddings.weight", t["embeddings.position_embeddings.weight"])
    token_type = g.const("token_type_0", t["embeddings.token_type_embeddings.weight"][0])
    x = g.op("Add", [g.op("Add", [words, g.op("Gather", [position_table, positions])]), token_type])
    x = layer_norm(x, "embeddings.LayerNorm")

    # Attention bias: 0 where a token is, a large negative number on padding; [batch, 1, 1, tokens].
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    masked = g.op("Mul", [g.op("Sub", [g.const("f_one", np.array(1, np.float32)), mask]), g.const("neg", np.array(-1e9, np.float32))])
    bias = g.op("Unsqueeze", [masked, g.const("axes_1_2", np.array([1, 2], dtype=np.int64))])
    scale = g.const("attention_scale", np.array(1 / np.sqrt(head), np.float32))

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        heads_of = lambda name, perm: g.op("Transpose", [g.op("Reshape", [linear(x, p + name), split_heads])], perm=perm)
        q = heads_of("attention.self.query", [0, 2, 1, 3])
        k = heads_of("attention.self.key", [0, 2, 3, 1])
        v = heads_of("attention.self.value", [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), bias])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
        x = layer_norm(g.op("Add", [linear(context, p + "attention.output.dense"), x]), p + "attention.output.LayerNorm")
        inner = linear(x, p + "intermediate.dense")
        # GELU, exact: 0.5 * x * (1 + erf(x / sqrt 2)).
        erf = g.op("Erf", [g.op("Mul", [inner, g.const(f"inv_sqrt2_{i}", np.array(1 / np.sqrt(2), np.float32))])])
        gelu = g.op("Mul", [g.op("Mul", [inner, g.op("Add", [erf, "f_one"])]), g.const(f"half_{i}", np.array(0.5, np.float32))])
        x = layer_norm(g.op("Add", [linear(gelu, p + "output.dense"), x]), p + "output.LayerNorm")

    # Mean over the real tokens, then unit length (sentence-transformers' Pooling + Normalize).
    weights = g.op("Unsqueeze", [mask, g.const("axis_2", np.array([2], dtype=np.int64))])
    total = g.op("ReduceSum", [g.op("Mul", [x, weights]), "one_axis"], keepdims=0)
    g.const("one_axis", np.array([1], dtype=np.int64))
    count = g.op("Max", [g.op("ReduceSum", [weights, "one_axis"], keepdims=0), g.const("tiny", np.array(1e-9, np.float32))])
    mean = g.op("Div", [total, count])
    norm = g.op("Max", [g.op("ReduceL2", [mean], axes=[-1], keepdims=1), g.const("eps_norm", np.array(1e-12, np.float32))])
    g.nodes.append(helper.make_node("Div", [mean, norm], ["sentence_embedding"]))

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"]) for n in ("input_ids", "attention_mask")]
    output = helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", hidden])
    graph = helper.make_graph(g.nodes, "bert_sentence_embedding", inputs, [output], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tarmac")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main(argv):
    model_dir, out = argv[0], argv[1]
    if len(argv) > 2 and argv[2] == "--random":
        hidden, layers, heads, ffn, vocab = (int(a) for a in argv[3:8])
        tensors, config = random_bert(hidden, layers, heads, ffn, vocab)
    else:
        tensors = {k.removeprefix("bert."): v for k, v in read_safetensors(f"{model_dir}/model.safetensors").items()}
        with open(f"{model_dir}/config.json") as f:
            config = json.load(f)
    onnx.save(build(tensors, config), out)


if __name__ == "__main__":
    main(sys.argv[1:])
