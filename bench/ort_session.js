// What bench/onnxruntime_time.js and bench/ort_check.js share: an ONNX Runtime session set up as
// the benchmarks run it, and random float32 inputs for it.
// NODE_PATH must name the node_modules folder holding onnxruntime-node.
'use strict';
const ort = require('onnxruntime-node');

// Tessel's pool uses every core for a kernel; ORT gets the same threads, for one op at a time.
function createSession(model, threads) {
  return ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all'});
}

// One float32 tensor per input, uniform in [-1, 1), from `random` (default Math.random). Only
// float32 inputs of static shape are supported.
function randomFeeds(session, random = Math.random) {
  const feeds = {};
  for (const input of session.inputMetadata) {
    if (input.type !== 'float32' || input.shape.some(d => typeof d !== 'number')) {
      throw new Error(`input '${input.name}': only float32 inputs of static shape are supported`);
    }
    const size = input.shape.reduce((a, b) => a * b, 1);
    feeds[input.name] = new ort.Tensor('float32', Float32Array.from({length: size}, () => random() * 2 - 1),
                                       input.shape);
  }
  return feeds;
}

module.exports = {createSession, randomFeeds};
