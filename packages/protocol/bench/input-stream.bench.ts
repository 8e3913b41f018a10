/**
 * Input-stream codec: encode and decode of 8-frame packets (2-byte and 16-byte inputs, held
 * buttons with a few changes) against a raw TypedArray/DataView loop that writes / reads the
 * same 8 frames uncompressed, measured in the same run. Goal: ratio ≥ 0.7, 0 B/op. Decoding a
 * packet that follows a header of the caller's own, in place with the `offset` option, is
 * measured next to taking a subarray first.
 */
import { BenchSuite } from '@netplay/bench-kit';
import {
  decodeInputStream,
  encodeInputStream,
  type InputStreamDecodeOptions,
  type InputStreamHeader,
  inputStreamMaxEncodedSize,
} from '../src/index.js';
import { PAIRED_ROUNDS, pairedRatio } from './paired.js';

const FRAMES = 8;

const BATCH = 256;
const suite = new BenchSuite('protocol/input-stream');
/** Folds results in as int32 so the harness itself allocates no heap numbers. */
let sink = 0;

/** Eight frames of a pad held down with a press at frame 3 and a release at frame 6. */
function heldFrames(inputSize: number): { frames: Uint8Array; reference: Uint8Array } {
  const reference = new Uint8Array(inputSize);
  for (let j = 0; j < inputSize; j++) reference[j] = j < 2 ? 0x10 : 0x80; // a held button, centred analog axes
  const frames = new Uint8Array(FRAMES * inputSize);
  let cur = reference.slice();
  for (let f = 0; f < FRAMES; f++) {
    if (f === 3 || f === 6) {
      cur = cur.slice();
      cur[0] = cur[0]! ^ 0x01; // press A at frame 3, release it at frame 6
    }
    frames.set(cur, f * inputSize);
  }
  return { frames, reference };
}

for (const inputSize of [2, 16]) {
  const { frames, reference } = heldFrames(inputSize);
  const header: InputStreamHeader = { startFrame: 1000, frameCount: FRAMES, inputSize };
  const rawSize = 8 + FRAMES * inputSize;
  const raw = new Uint8Array(rawSize);
  const rawView = new DataView(raw.buffer);
  const packet = new Uint8Array(inputStreamMaxEncodedSize(FRAMES, inputSize));
  const out = new Uint8Array(FRAMES * inputSize);
  const tag = `8×${inputSize}B`;

  // Baseline: the same header fields and the 8 frames written uncompressed, byte by byte.
  const rawWrite = () => {
    for (let k = 0; k < BATCH; k++) {
      rawView.setUint32(0, header.startFrame + k);
      rawView.setUint8(4, FRAMES);
      rawView.setUint16(5, inputSize);
      rawView.setUint8(7, 1);
      for (let i = 0; i < FRAMES * inputSize; i++) raw[8 + i] = frames[i]!;
    }
    sink = (sink + raw[8]!) | 0;
  };
  suite.measure(`raw write ${tag}`, rawWrite, { batch: BATCH, note: 'uncompressed baseline' });
  let encodedSize = 0;
  const encode = () => {
    for (let k = 0; k < BATCH; k++) {
      header.startFrame = 1000 + k;
      encodedSize = encodeInputStream(header, frames, reference, packet, 0);
    }
    sink = (sink + encodedSize) | 0;
  };
  suite.measure(`encode ${tag}`, encode, {
    batch: BATCH,
    baseline: `raw write ${tag}`,
    note: 'goal ratio ≥ 0.7, 0 B/op',
  });

  const rawRead = () => {
    let acc = 0;
    for (let k = 0; k < BATCH; k++) {
      acc = (acc + rawView.getUint32(0) + rawView.getUint8(4) + rawView.getUint16(5)) | 0;
      for (let i = 0; i < FRAMES * inputSize; i++) out[i] = raw[8 + i]!;
    }
    sink = (sink + acc + out[0]!) | 0;
  };
  suite.measure(`raw read ${tag}`, rawRead, { batch: BATCH, note: 'uncompressed baseline' });
  const encoded = packet.subarray(0, encodedSize);
  const options: InputStreamDecodeOptions = { reference };
  const decode = () => {
    let acc = 0;
    for (let k = 0; k < BATCH; k++) acc = (acc + decodeInputStream(encoded, out, options)) | 0;
    sink = (sink + acc) | 0;
  };
  suite.measure(`decode ${tag}`, decode, {
    batch: BATCH,
    baseline: `raw read ${tag}`,
    note: 'goal ratio ≥ 0.7, 0 B/op',
  });
  // The same packet after a 4-byte header of the caller's own, decoded in place with an offset,
  // next to what a caller without the offset option does: a subarray view per message.
  const message = new Uint8Array(4 + encodedSize);
  message.set(encoded, 4);
  const atOptions: InputStreamDecodeOptions = { reference, offset: 4, length: encodedSize };
  suite.measure(
    `decode at offset ${tag}`,
    () => {
      let acc = 0;
      for (let k = 0; k < BATCH; k++) acc = (acc + decodeInputStream(message, out, atOptions)) | 0;
      sink = (sink + acc) | 0;
    },
    { batch: BATCH, baseline: `raw read ${tag}`, note: 'packet after a 4-byte header, no copy; goal 0 B/op' },
  );
  suite.measure(
    `subarray + decode ${tag}`,
    () => {
      let acc = 0;
      for (let k = 0; k < BATCH; k++) acc = (acc + decodeInputStream(message.subarray(4), out, options)) | 0;
      sink = (sink + acc) | 0;
    },
    { batch: BATCH, baseline: `raw read ${tag}`, note: 'the same without the offset option: a view per message' },
  );
  suite.record({
    name: `encode paired ${tag}`,
    value: pairedRatio(rawWrite, encode),
    unit: 'ratio',
    note: `raw write time / encode time, median of ${PAIRED_ROUNDS} back-to-back rounds (paired.ts); goal ≥ 0.7`,
  });
  suite.record({
    name: `decode paired ${tag}`,
    value: pairedRatio(rawRead, decode),
    unit: 'ratio',
    note: `raw read time / decode time, median of ${PAIRED_ROUNDS} back-to-back rounds (paired.ts); goal ≥ 0.7`,
  });
  suite.record({ name: `encoded size ${tag}`, value: encodedSize, unit: 'bytes', note: `raw ${rawSize} bytes` });
  suite.record({ name: `size ratio ${tag}`, value: encodedSize / rawSize, unit: 'encoded/raw' });
}

suite.finish();
if (sink === 42) console.log('');
