"""Reference embeddings of bge-small-en-v1.5, computed apart from the platform's own code: the encoder graph as
langchain4j's jar ships it (output last_hidden_state, before cls_pooling.py wraps it), run by Python's
onnxruntime, its input tokenized by Hugging Face's Rust `tokenizers`, and the model's [CLS] pooling and L2
normalization done here in numpy. test/fixtures/embeddings/bge-small-en-v1.5.json was made by it; the unit test
checks the platform's vectors (our graph, our JavaScript tokenizer) against them.

usage: reference_onnx.py ENCODER.onnx TOKENIZER.json SENTENCES.json > FIXTURE.json
       (in a venv with onnxruntime, tokenizers and numpy from PyPI)
"""
import json
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main(encoder, tokenizer_file, sentences_file):
    tokenizer = Tokenizer.from_file(tokenizer_file)
    session = ort.InferenceSession(encoder)
    sentences = json.load(open(sentences_file))
    vectors = []
    for sentence in sentences:
        ids = np.array([tokenizer.encode(sentence).ids], dtype=np.int64)
        inputs = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        cls = session.run(["last_hidden_state"], inputs)[0][0, 0]
        vectors.append([float(x) for x in cls / np.linalg.norm(cls)])
    print(json.dumps({"sentences": sentences, "vectors": vectors}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
