// Checks a Tessel package against ONNX Runtime on one random input: writes the input to an .npz,
// runs `tessel run PKG --inputs in.npz --outputs out.npz`, runs the model in ONNX Runtime on the
// same input and compares each output. Prints one line per output: its shape, largest magnitude
// and largest absolute difference relative to that magnitude; exits 1 when one exceeds --rtol.
//   node bench/ort_check.js MODEL.onnx PKG.tar [--tessel build/cli/tessel] [--rtol 1e-4] [--seed S]
// NODE_PATH must name the node_modules folder holding onnxruntime-node. Inputs and outputs are
// float32 (what the benchmarks' models have).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');
const {spawnSync} = require('child_process');
const {createSession, randomFeeds} = require('./ort_session.js');

function parse(argv) {
  const opt = {tessel: 'build/cli/tessel', rtol: 1e-4, seed: 1};
  const files = [];
  for (let i = 0; i < argv.length; ++i) {
    if (!argv[i].startsWith('--')) { files.push(argv[i]); continue; }
    const key = argv[i].slice(2);
    if (!(key in opt) || i + 1 >= argv.length) throw new Error(`unknown flag or missing value: ${argv[i]}`);
    opt[key] = key === 'tessel' ? argv[++i] : Number(argv[++i]);
  }
  if (files.length !== 2) throw new Error('usage: ort_check.js MODEL.onnx PKG.tar [flags]');
  [opt.model, opt.pkg] = files;
  return opt;
}

// A small seeded generator (mulberry32), so that a mismatch can be reproduced.
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A float32 array as a .npy payload (format 1.0, header padded to 64 bytes as numpy does).
function toNpy(tensor) {
  const shape = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(head);
  head[6] = 1;
  head.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), data]);
}

// .npy payload -> {shape, data: Float32Array}; float32 only.
function fromNpy(bytes, what) {
  const major = bytes[6];
  const len = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', start, start + len);
  if (!header.includes("'<f4'")) throw new Error(`${what}: not float32 (${header.trim()})`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter(s => s.trim()).map(Number);
  const data = bytes.subarray(start + len);
  const copy = new Float32Array(data.length / 4);
  Buffer.from(copy.buffer).set(data);
  return {shape, data: copy};
}

// The standard zip CRC-32.
const crcTable = Array.from({length: 256}, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const byte of buf) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// An uncompressed zip of {name: bytes}: what numpy.savez writes.
function writeZip(file, entries) {
  const parts = [], central = [];
  let offset = 0;
  for (const [name, data] of Object.entries(entries)) {
    const n = Buffer.from(name);
    const fields = Buffer.alloc(26);  // version, flags, method, time, date, crc, sizes, name, extra
    fields.writeUInt16LE(20, 0);
    fields.writeUInt32LE(crc32(data), 10);
    fields.writeUInt32LE(data.length, 14);
    fields.writeUInt32LE(data.length, 18);
    fields.writeUInt16LE(n.length, 22);
    const local = Buffer.concat([Buffer.from([0x50, 0x4b, 3, 4]), fields, n]);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    fields.copy(dir, 6);
    dir.writeUInt32LE(offset, 42);
    central.push(Buffer.concat([dir, n]));
    parts.push(local, data);
    offset += local.length + data.length;
  }
  const dirBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(central.length, 8);
  end.writeUInt16LE(central.length, 10);
  end.writeUInt32LE(dirBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  fs.writeFileSync(file, Buffer.concat([...parts, dirBytes, end]));
}

// A zip's entries {name: bytes}, stored or deflated, read through its central directory.
function readZip(file) {
  const buf = fs.readFileSync(file);
  const end = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 5, 6]));
  const entries = {};
  let p = buf.readUInt32LE(end + 16);
  for (let i = 0; i < buf.readUInt16LE(end + 10); ++i) {
    const method = buf.readUInt16LE(p + 10), size = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28), extraLen = buf.readUInt16LE(p + 30);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    const local = buf.readUInt32LE(p + 42);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + size);
    entries[name] = method === 8 ? zlib.inflateRawSync(raw) : raw;
    p += 46 + nameLen + extraLen + buf.readUInt16LE(p + 32);
  }
  return entries;
}

async function main() {
  const opt = parse(process.argv.slice(2));
  const session = await createSession(opt.model, 1);
  const feeds = randomFeeds(session, seeded(opt.seed));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-check-'));
  try {
    const npz = {};
    for (const [name, t] of Object.entries(feeds)) npz[`${name}.npy`] = toNpy(t);
    writeZip(path.join(dir, 'in.npz'), npz);
    const run = spawnSync(opt.tessel, ['run', opt.pkg, '--inputs', path.join(dir, 'in.npz'),
                                       '--outputs', path.join(dir, 'out.npz')], {encoding: 'utf8'});
    if (run.status !== 0) {
      const why = run.error ? run.error.message : run.signal ? `signal ${run.signal}` : `exit ${run.status}`;
      throw new Error(`tessel run failed (${why}): ${run.stderr || ""}`);
    }
    const got = readZip(path.join(dir, 'out.npz'));
    const want = await session.run(feeds);
    let ok = true;
    for (const [name, w] of Object.entries(want)) {
      if (!(`${name}.npy` in got)) throw new Error(`tessel wrote no output '${name}'`);
      const g = fromNpy(got[`${name}.npy`], name);
      if (g.shape.join() !== w.dims.join()) {
        throw new Error(`output '${name}': shape [${g.shape}] against ORT's [${w.dims}]`);
      }
      // Relative to the output's largest magnitude: small elements carry the others' rounding.
      let scale = 0, diff = 0;
      for (let i = 0; i < w.data.length; ++i) {
        scale = Math.max(scale, Math.abs(w.data[i]));
        diff = Math.max(diff, Math.abs(w.data[i] - g.data[i]));
      }
      const rel = diff / Math.max(scale, 1e-6);
      const pass = rel <= opt.rtol;  // false for NaN too
      ok = ok && pass;
      console.log(`${path.basename(opt.model)} '${name}' [${w.dims}]: max |ORT| ${scale.toPrecision(4)}, ` +
                  `max |Tessel - ORT| / max |ORT| ${rel.toExponential(2)} ${pass ? 'ok' : 'MISMATCH'}`);
    }
    process.exitCode = ok ? 0 : 1;
  } finally {
    fs.rmSync(dir, {recursive: true, force: true});
  }
}

main().catch(e => { console.error(`ort_check.js: ${e.message}`); process.exit(2); });
