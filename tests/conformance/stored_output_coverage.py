#!/usr/bin/env python3
"""Which ONNX backend tests exercise an op, and with what: per op, the tests that pass on an engine,
their models' opsets, the attributes the op's nodes set and which inputs they give (docs/testing.md
uses it to show what the stored outputs check of the reference executor).

usage: onnx_conformance --engine reference --verbose > results.txt
       stored_output_coverage.py DATA_DIR results.txt OP [OP ...]

Reads model.onnx files from the protobuf wire format, so it needs no onnx module.
"""
import collections
import os
import re
import sys

FOLDERS = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def fields(buf):
    """(field number, value) of each field of a protobuf message; length-delimited values as bytes."""
    i = 0

    def varint():
        nonlocal i
        value, shift = 0, 0
        while True:
            byte = buf[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while i < len(buf):
        key = varint()
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            yield number, varint()
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            yield number, buf[i:i + size]
            i += size
        elif wire_type == 2:
            size = varint()
            yield number, buf[i:i + size]
            i += size
        else:
            raise ValueError(f"unsupported wire type {wire_type}")


def graph_nodes(graph):
    """(op_type, attribute names, inputs given) of every node, subgraphs (If branches) included."""
    for number, node in fields(graph):
        if number != 1:  # GraphProto.node
            continue
        op, attrs, inputs = "", [], []
        for field, value in fields(node):
            if field == 4:  # NodeProto.op_type
                op = value.decode()
            elif field == 1:  # NodeProto.input ("" for an omitted optional input)
                inputs.append("1" if value else "0")
            elif field == 5:  # NodeProto.attribute
                for attr_field, attr_value in fields(value):
                    if attr_field == 1:
                        attrs.append(attr_value.decode())
                    elif attr_field == 6:  # AttributeProto.g
                        yield from graph_nodes(attr_value)
        yield op, tuple(sorted(attrs)), "".join(inputs)


def read_model(path):
    with open(path, "rb") as f:
        buf = f.read()
    opset, nodes = None, []
    for number, value in fields(buf):
        if number == 8:  # ModelProto.opset_import
            entry = dict(fields(value))
            if entry.get(1, b"") in (b"", b"ai.onnx"):
                opset = entry.get(2)
        elif number == 7:  # ModelProto.graph
            nodes = list(graph_nodes(value))
    return opset, nodes


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    data_dir, results, ops = sys.argv[1], sys.argv[2], sys.argv[3:]
    outcome = {}
    with open(results) as f:
        for line in f:
            m = re.match(r"(PASS|FAIL|UNSUPPORTED)\s+(\S+?)(:|$)", line.strip())
            if m:
                outcome[m.group(2)] = m.group(1)
    models = {}
    for folder in FOLDERS:
        for test in sorted(os.listdir(os.path.join(data_dir, folder))):
            path = os.path.join(data_dir, folder, test, "model.onnx")
            if os.path.exists(path):
                models[f"{folder}/{test}"] = read_model(path)
    for op in ops:
        counts, opsets = collections.Counter(), set()
        attrs, inputs = collections.Counter(), collections.Counter()
        for test, (opset, nodes) in models.items():
            mine = [n for n in nodes if n[0] == op]
            if not mine:
                continue
            counts[outcome.get(test, "not run")] += 1
            if outcome.get(test) != "PASS":
                continue
            opsets.add(opset)
            for _, node_attrs, node_inputs in mine:
                attrs.update(node_attrs)
                inputs[node_inputs] += 1
        print(f"{op}: {dict(counts)}; passing at opsets {sorted(opsets)}")
        print(f"  attributes set: {dict(attrs)}")
        print(f"  inputs given (1 = present): {dict(inputs)}")


if __name__ == "__main__":
    main()
