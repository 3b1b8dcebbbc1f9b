// Times an ONNX model in ONNX Runtime (the onnxruntime-node package), as `tessel run --print-time`
// times a package: `repeat` batches of `number` runs after a warm-up, each batch's mean per run;
// prints the median of the batches in ms. Inputs: float32 (static shapes), uniform in [-1, 1].
//   node bench/onnxruntime_time.js MODEL.onnx [--threads T] [--repeat R] [--number N]
// NODE_PATH must name the node_modules folder holding onnxruntime-node.
'use strict';
const {createSession, randomFeeds} = require('./ort_session.js');

function parse(argv) {
  const opt = {model: null, threads: 2, repeat: 5, number: 100};
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    if (!flag.startsWith('--')) { opt.model = flag; continue; }
    const key = flag.slice(2);
    if (!(key in opt) || i + 1 >= argv.length) throw new Error(`unknown flag or missing value: ${flag}`);
    opt[key] = Number(argv[++i]);
  }
  if (!opt.model) throw new Error('no model given');
  return opt;
}

async function main() {
  const opt = parse(process.argv.slice(2));
  const session = await createSession(opt.model, opt.threads);
  const feeds = randomFeeds(session);
  for (let i = 0; i < opt.number; ++i) await session.run(feeds);
  const batches = [];
  for (let r = 0; r < opt.repeat; ++r) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < opt.number; ++i) await session.run(feeds);
    batches.push(Number(process.hrtime.bigint() - t0) / 1e6 / opt.number);
  }
  batches.sort((a, b) => a - b);
  console.log(batches[batches.length >> 1].toFixed(4));
}

main().catch(e => { console.error(`onnxruntime_time.js: ${e.message}`); process.exit(1); });
