"""Wraps a BERT encoder's ONNX graph that outputs last_hidden_state (the graphs langchain4j ships, such as
bge-small-en-v1.5) into the graph the platform runs: inputs input_ids and attention_mask (int64 [batch,
tokens]), output sentence_embedding (float32 [batch, hidden], unit length), pooled from the [CLS] token as
the model was trained (BAAI's bge models pool CLS, then L2-normalize). token_type_ids, when the graph takes
them, become zeros of input_ids' shape (one segment) inside the graph.

usage: cls_pooling.py IN.onnx OUT.onnx
"""
import sys

import onnx
from onnx import TensorProto, helper


def wrap(source, target):
    model = onnx.load(source)
    graph = model.graph
    names = [i.name for i in graph.input]
    if "last_hidden_state" not in [o.name for o in graph.output]:
        sys.exit(f"{source}: no last_hidden_state output")
    before = []
    if "token_type_ids" in names:
        graph.input.remove(next(i for i in graph.input if i.name == "token_type_ids"))
        before = [
            helper.make_node("Shape", ["input_ids"], ["tarmac_ids_shape"]),
            helper.make_node(
                "ConstantOfShape",
                ["tarmac_ids_shape"],
                ["token_type_ids"],
                value=helper.make_tensor("zero", TensorProto.INT64, [1], [0]),
            ),
        ]
    after = [
        helper.make_node("Constant", [], ["tarmac_cls_index"], value=helper.make_tensor("i", TensorProto.INT64, [], [0])),
        helper.make_node("Gather", ["last_hidden_state", "tarmac_cls_index"], ["tarmac_cls"], axis=1),
        helper.make_node("LpNormalization", ["tarmac_cls"], ["sentence_embedding"], axis=1, p=2),
    ]
    # Nodes stay in topological order: the zeros before their readers, the pooling after the encoder.
    nodes = before + list(graph.node) + after
    del graph.node[:]
    graph.node.extend(nodes)
    hidden = next(o for o in graph.output if o.name == "last_hidden_state")
    size = hidden.type.tensor_type.shape.dim[2].dim_value
    graph.output.remove(hidden)
    graph.output.append(helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch_size", size]))
    onnx.checker.check_model(model)
    onnx.save(model, target)


if __name__ == "__main__":
    wrap(sys.argv[1], sys.argv[2])
