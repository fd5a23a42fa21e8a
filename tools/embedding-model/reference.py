"""An independent reference for the ONNX graph build_onnx.py makes: the same BERT sentence embedding computed
in plain numpy, straight from the safetensors weights (read by the `safetensors` package) and tokenized by
Hugging Face's own `tokenizers` (Rust) from tokenizer.json. It shares no code with build_onnx.py or with
the platform's TypeScript tokenizer, so agreement means both read the model the same way.

usage: reference.py MODEL_DIR SENTENCES.json OUT.json      writes {model, sentences, vectors}
       (used once to make test/fixtures/embeddings/all-minilm-l6-v2.json; see docs/knowledge-bases.md)
"""
import json
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def erf(x):
    from math import erf as scalar_erf

    return np.vectorize(scalar_erf)(x)


def embed(model_dir, sentence):
    config = json.load(open(f"{model_dir}/config.json"))
    t = {k.removeprefix("bert."): v.astype(np.float64) for k, v in load_file(f"{model_dir}/model.safetensors").items()}
    tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tokenizer.no_padding()  # tokenizer.json pads to 128; the model sees only the real tokens
    tokenizer.enable_truncation(256)  # sentence-transformers max_seq_length
    ids = np.array(tokenizer.encode(sentence).ids)
    eps, heads = config["layer_norm_eps"], config["num_attention_heads"]
    x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][: len(ids)]
    x = layer_norm(x + t["embeddings.token_type_embeddings.weight"][0], t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], eps)
    lin = lambda h, name: h @ t[name + ".weight"].T + t[name + ".bias"]
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        n, d = x.shape
        split = lambda h: h.reshape(n, heads, d // heads).transpose(1, 0, 2)
        q, k, v = (split(lin(x, p + f"attention.self.{w}")) for w in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / np.sqrt(d // heads)
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = ((s / s.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(n, d)
        x = layer_norm(lin(ctx, p + "attention.output.dense") + x, t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"], eps)
        inner = lin(x, p + "intermediate.dense")
        inner = 0.5 * inner * (1 + erf(inner / np.sqrt(2)))
        x = layer_norm(lin(inner, p + "output.dense") + x, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"], eps)
    mean = x.mean(0)
    return mean / np.linalg.norm(mean)


def main(model_dir, sentences_path, out):
    sentences = json.load(open(sentences_path))
    vectors = [[round(float(v), 7) for v in embed(model_dir, s)] for s in sentences]
    json.dump({"model": "all-MiniLM-L6-v2", "sentences": sentences, "vectors": vectors}, open(out, "w"))


if __name__ == "__main__":
    main(*sys.argv[1:])
