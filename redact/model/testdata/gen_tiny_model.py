#!/usr/bin/env python3
"""Write a tiny ONNX token classifier with the privacy filter's interface.

Usage: gen_tiny_model.py OUT.onnx TABLE.json [float16]

TABLE.json is a list: entry i is the label (0..32) the model predicts for
token id i. The graph is logits = Gather(table, input_ids) * attention_mask,
with the real model's names: inputs input_ids and attention_mask (int64,
[batch, sequence]) and output logits ([batch, sequence, 33]), float32, or
float16 when the third argument says so. The weights go to an external-data
sidecar OUT.onnx_data, as the published variants keep theirs.
"""
import json
import os
import struct
import sys

import onnx
from onnx import TensorProto, helper

NUM_LABELS = 33


def main():
    out, table_path = sys.argv[1], sys.argv[2]
    half = len(sys.argv) > 3 and sys.argv[3] == "float16"
    with open(table_path) as f:
        table = json.load(f)
    weights = [0.0] * (len(table) * NUM_LABELS)
    for token_id, label in enumerate(table):
        weights[token_id * NUM_LABELS + label] = 10.0
    init = [
        # raw bytes, so that save_model moves them to the sidecar
        helper.make_tensor("table", TensorProto.FLOAT, [len(table), NUM_LABELS],
                           struct.pack("<%df" % len(weights), *weights), raw=True),
        # not raw: shape inference needs it inline
        helper.make_tensor("axes", TensorProto.INT64, [1], [2]),
    ]
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["scores"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axes"], ["mask3"]),
        helper.make_node("Mul", ["scores", "mask3"], ["logits_f" if half else "logits"]),
    ]
    out_type = TensorProto.FLOAT
    if half:
        nodes.append(helper.make_node("Cast", ["logits_f"], ["logits"], to=TensorProto.FLOAT16))
        out_type = TensorProto.FLOAT16
    graph = helper.make_graph(
        nodes,
        "tiny_privacy_filter",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("logits", out_type, ["batch", "sequence", NUM_LABELS])],
        init,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save_model(
        model,
        out,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=os.path.basename(out) + "_data",
        size_threshold=0,
    )


if __name__ == "__main__":
    main()
