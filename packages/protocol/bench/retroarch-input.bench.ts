/**
 * RetroArch INPUT: encode into a caller buffer and decode from a buffer, in messages/s, next to a
 * raw DataView loop doing the same field writes / reads in the same run. Goal: ratio ≥ 0.7 and
 * 0 B/op for the encode into a caller buffer and for the decode into a reusable frame. The typed
 * decode returns a fresh message (an object and a Uint32Array), so it allocates those.
 */
import { BenchSuite } from '@netplay/bench-kit';
import {
  decodeRetroArchInputInto,
  decodeRetroArchPayload,
  encodeRetroArchInput,
  encodeRetroArchMessage,
  FrameDecoder,
  RetroArchCommand,
  RetroArchInputFrame,
  type RetroArchInputMessage,
  retroArchInputSize,
} from '../src/index.js';
import { PAIRED_ROUNDS, pairedRatio } from './paired.js';

const BATCH = 256;
const suite = new BenchSuite('protocol/retroarch-input');
let sink = 0;

// 1 word: one joypad. 4 words: a joypad and an analog pad (1 + 3).
for (const words of [1, 4]) {
  const tag = `${words}w`;
  const size = retroArchInputSize(words);
  const input = Uint32Array.from({ length: words }, (_, i) => 0x0101 * (i + 1));
  const buffer = new Uint8Array(size);
  const view = new DataView(buffer.buffer);

  const rawWrite = () => {
    for (let k = 0; k < BATCH; k++) {
      view.setUint32(0, 3);
      view.setUint32(4, size - 8);
      view.setUint32(8, k);
      view.setUint32(12, 1);
      for (let i = 0; i < words; i++) view.setUint32(16 + 4 * i, input[i]!);
    }
    sink = (sink + buffer[11]!) | 0;
  };
  suite.measure(`raw DataView write ${tag}`, rawWrite, { batch: BATCH, note: 'baseline' });

  const encode = () => {
    for (let k = 0; k < BATCH; k++) encodeRetroArchInput(buffer, 0, k, 1, input);
    sink = (sink + buffer[11]!) | 0;
  };
  suite.measure(`encodeRetroArchInput ${tag}`, encode, {
    batch: BATCH,
    baseline: `raw DataView write ${tag}`,
    note: 'goal ratio ≥ 0.7, 0 B/op',
  });

  const message: { -readonly [K in keyof RetroArchInputMessage]: RetroArchInputMessage[K] } = {
    type: 'input',
    frame: 0,
    client: 1,
    input,
  };
  suite.measure(
    `encodeRetroArchMessage(input) ${tag}`,
    () => {
      for (let k = 0; k < BATCH; k++) {
        message.frame = k;
        encodeRetroArchMessage(message, buffer, 0);
      }
      sink = (sink + buffer[11]!) | 0;
    },
    { batch: BATCH, baseline: `raw DataView write ${tag}`, note: 'typed union entry point' },
  );

  encodeRetroArchInput(buffer, 0, 1234, 1, input);
  const out = new Uint32Array(words);
  const rawRead = () => {
    for (let k = 0; k < BATCH; k++) {
      sink = (sink + view.getUint32(8) + view.getUint32(12)) | 0;
      for (let i = 0; i < words; i++) out[i] = view.getUint32(16 + 4 * i);
    }
    sink = (sink + out[0]!) | 0;
  };
  suite.measure(`raw DataView read ${tag}`, rawRead, { batch: BATCH, note: 'baseline' });

  const frame = new RetroArchInputFrame();
  const decode = () => {
    for (let k = 0; k < BATCH; k++) {
      decodeRetroArchInputInto(frame, buffer, 8, size - 8);
      sink = (sink + frame.frame + frame.client) | 0;
    }
    sink = (sink + frame.words[0]!) | 0;
  };
  suite.measure(`decodeRetroArchInputInto ${tag}`, decode, {
    batch: BATCH,
    baseline: `raw DataView read ${tag}`,
    note: 'goal ratio ≥ 0.7, 0 B/op (reusable frame)',
  });

  suite.measure(
    `decodeRetroArchPayload(input) ${tag}`,
    () => {
      for (let k = 0; k < BATCH; k++) {
        const m = decodeRetroArchPayload(RetroArchCommand.Input, buffer, 8, size - 8, 'client');
        if (m.type === 'input') sink = (sink + m.frame) | 0;
      }
    },
    { batch: BATCH, baseline: `raw DataView read ${tag}`, note: 'typed union: allocates the message' },
  );

  // A TCP chunk holding BATCH INPUT frames, reassembled by the FrameDecoder and decoded in place.
  const stream = new Uint8Array(BATCH * size);
  for (let k = 0; k < BATCH; k++) encodeRetroArchInput(stream, k * size, k, 1, input);
  const decoder = new FrameDecoder();
  suite.measure(
    `FrameDecoder + decodeInto ${tag}`,
    () => {
      decoder.push(stream);
      while (decoder.readFrame()) {
        decodeRetroArchInputInto(frame, decoder.bytes, decoder.payloadOffset, decoder.payloadLength);
        sink = (sink + frame.frame) | 0;
      }
    },
    { batch: BATCH, baseline: `raw DataView read ${tag}`, note: 'stream of whole frames, 0 B/op' },
  );
  suite.record({
    name: `encode paired ${tag}`,
    value: pairedRatio(rawWrite, encode),
    unit: 'ratio',
    note: `raw write time / encodeRetroArchInput time, median of ${PAIRED_ROUNDS} back-to-back rounds (paired.ts); goal ≥ 0.7`,
  });
  suite.record({
    name: `decode paired ${tag}`,
    value: pairedRatio(rawRead, decode),
    unit: 'ratio',
    note: `raw read time / decodeRetroArchInputInto time, median of ${PAIRED_ROUNDS} back-to-back rounds (paired.ts); goal ≥ 0.7`,
  });
}

suite.finish();
if (sink === 42) console.log('');
