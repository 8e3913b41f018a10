/**
 * FCE Ultra per-frame messages: decode into a reused scratch object next to the allocating decoder
 * and a raw DataView loop doing the same checks and reads, in messages/s, measured in the same
 * run. Goal: 0 B/op for the decode-into rows. The UDP datagrams carry a CRC32 over 9 or 13 bytes,
 * which the baseline computes too (with the package's crc32); the TCP frame has no CRC, so its
 * rows show the decode overhead alone. The stream rows read a chunk of BATCH TCP frames. B/op is
 * the kit's (every byte allocated, collected garbage included), per message.
 */
import { BenchSuite } from '@netplay/bench-kit';
import {
  crc32,
  createFceuServerTcpMessage,
  createFceuTcpFrame,
  createFceuUdpFrame,
  createFceuUdpInput,
  decodeFceuTcpFrame,
  decodeFceuTcpFrameInto,
  decodeFceuUdpFrame,
  decodeFceuUdpFrameInto,
  decodeFceuUdpInput,
  decodeFceuUdpInputInto,
  encodeFceuTcpFrame,
  encodeFceuUdpFrame,
  encodeFceuUdpInput,
  FceuCommand,
  isFceuCommand,
  readFceuServerTcpMessage,
  readFceuServerTcpMessageInto,
} from '../src/index.js';
import { PAIRED_ROUNDS, pairedRatio } from './paired.js';

const BATCH = 256;
const suite = new BenchSuite('protocol/fceu');

/** Records the paired ratio of a decode-into row to its raw baseline. */
function paired(name: string, baseline: () => void, subject: () => void): void {
  suite.record({
    name: `${name} paired`,
    value: pairedRatio(baseline, subject),
    unit: 'ratio',
    note: `raw time / decode-into time, median of ${PAIRED_ROUNDS} back-to-back rounds (paired.ts); goal ≥ 0.7`,
  });
}
/** Folds results in as int32 so the harness itself allocates no heap numbers. */
let sink = 0;
/**
 * The allocating rows hand each message here, as a caller that keeps it would; without an escape
 * V8 may scalar-replace the message objects and the rows would not show what a real caller pays.
 */
let kept: unknown;

const LE = true;
const frameData = { controllers: new Uint8Array([0x09, 0x40, 0x00, 0x81]), command: FceuCommand.None };
/** The baseline's command check: a table lookup, as a hand-written decoder would do. */
const commandOk = Uint8Array.from({ length: 256 }, (_, c) => (isFceuCommand(c) ? 1 : 0));
const rawControllers = new Uint8Array(4);

// Server → client UDP frame datagram (17 bytes).
{
  const bytes = new Uint8Array(17);
  encodeFceuUdpFrame(0x5eed, 1234, frameData, bytes);
  const view = new DataView(bytes.buffer);
  const rawUdpFrame = () => {
    for (let k = 0; k < BATCH; k++) {
      if (bytes.length !== 17 || crc32(bytes, 4, 17) !== view.getUint32(0, LE)) throw new Error('bad');
      const command = bytes[16]!;
      if (commandOk[command] === 0) throw new Error('bad');
      sink = (sink + view.getUint32(4, LE) + view.getUint32(8, LE) + command) | 0;
      for (let i = 0; i < 4; i++) rawControllers[i] = bytes[12 + i]!;
    }
    sink = (sink + rawControllers[0]!) | 0;
  };
  suite.measure('raw DataView UDP frame', rawUdpFrame, {
    batch: BATCH,
    note: 'baseline: CRC32, length, command and field reads',
  });
  const scratch = createFceuUdpFrame();
  const udpFrameInto = () => {
    for (let k = 0; k < BATCH; k++) {
      decodeFceuUdpFrameInto(scratch, bytes);
      sink = (sink + scratch.counter + scratch.frame.command) | 0;
    }
    sink = (sink + scratch.frame.controllers[0]!) | 0;
  };
  suite.measure('decodeFceuUdpFrameInto', udpFrameInto, {
    batch: BATCH,
    baseline: 'raw DataView UDP frame',
    note: 'reused scratch; goal 0 B/op',
  });
  const udpFrameAlloc = () => {
    for (let k = 0; k < BATCH; k++) {
      const m = decodeFceuUdpFrame(bytes);
      kept = m;
      sink = (sink + m.counter + m.frame.command) | 0;
    }
  };
  suite.measure('decodeFceuUdpFrame', udpFrameAlloc, {
    batch: BATCH,
    baseline: 'raw DataView UDP frame',
    note: 'allocating decoder, message kept',
  });
  paired('decodeFceuUdpFrameInto', rawUdpFrame, udpFrameInto);
}

// Client → server UDP input datagram (13 bytes).
{
  const bytes = new Uint8Array(13);
  encodeFceuUdpInput(0x5eed, 1234, 0x09, bytes);
  const view = new DataView(bytes.buffer);
  const rawUdpInput = () => {
    for (let k = 0; k < BATCH; k++) {
      if (bytes.length !== 13 || crc32(bytes, 4, 13) !== view.getUint32(0, LE)) throw new Error('bad');
      sink = (sink + view.getUint32(4, LE) + view.getUint32(8, LE) + bytes[12]!) | 0;
    }
  };
  suite.measure('raw DataView UDP input', rawUdpInput, {
    batch: BATCH,
    note: 'baseline: CRC32, length and field reads',
  });
  const scratch = createFceuUdpInput();
  const udpInputInto = () => {
    for (let k = 0; k < BATCH; k++) {
      decodeFceuUdpInputInto(scratch, bytes);
      sink = (sink + scratch.counter + scratch.controller) | 0;
    }
  };
  suite.measure('decodeFceuUdpInputInto', udpInputInto, {
    batch: BATCH,
    baseline: 'raw DataView UDP input',
    note: 'reused scratch; goal 0 B/op',
  });
  const udpInputAlloc = () => {
    for (let k = 0; k < BATCH; k++) {
      const m = decodeFceuUdpInput(bytes);
      kept = m;
      sink = (sink + m.counter + m.controller) | 0;
    }
  };
  suite.measure('decodeFceuUdpInput', udpInputAlloc, {
    batch: BATCH,
    baseline: 'raw DataView UDP input',
    note: 'allocating decoder, message kept',
  });
  paired('decodeFceuUdpInputInto', rawUdpInput, udpInputInto);
}

// Server → client TCP frame packet (9 bytes), alone and as a stream of BATCH packets.
{
  const bytes = new Uint8Array(9);
  encodeFceuTcpFrame(1234, frameData, bytes);
  const view = new DataView(bytes.buffer);
  const rawTcp = (b: Uint8Array, v: DataView, at: number): void => {
    const counter = v.getUint32(at, LE);
    if (counter === 0xffffffff) throw new Error('text');
    const command = b[at + 8]!;
    if (commandOk[command] === 0) throw new Error('bad');
    for (let i = 0; i < 4; i++) rawControllers[i] = b[at + 4 + i]!;
    sink = (sink + counter + command) | 0;
  };
  const rawTcpFrame = () => {
    for (let k = 0; k < BATCH; k++) {
      if (bytes.length !== 9) throw new Error('bad');
      rawTcp(bytes, view, 0);
    }
    sink = (sink + rawControllers[0]!) | 0;
  };
  suite.measure('raw DataView TCP frame', rawTcpFrame, {
    batch: BATCH,
    note: 'baseline: length, counter, command and field reads',
  });
  const scratch = createFceuTcpFrame();
  const tcpFrameInto = () => {
    for (let k = 0; k < BATCH; k++) {
      decodeFceuTcpFrameInto(scratch, bytes);
      sink = (sink + scratch.counter + scratch.frame.command) | 0;
    }
    sink = (sink + scratch.frame.controllers[0]!) | 0;
  };
  suite.measure('decodeFceuTcpFrameInto', tcpFrameInto, {
    batch: BATCH,
    baseline: 'raw DataView TCP frame',
    note: 'reused scratch; goal 0 B/op',
  });
  const tcpFrameAlloc = () => {
    for (let k = 0; k < BATCH; k++) {
      const m = decodeFceuTcpFrame(bytes);
      kept = m;
      sink = (sink + m.counter + m.frame.command) | 0;
    }
  };
  suite.measure('decodeFceuTcpFrame', tcpFrameAlloc, {
    batch: BATCH,
    baseline: 'raw DataView TCP frame',
    note: 'allocating decoder, message kept',
  });

  const stream = new Uint8Array(BATCH * 9);
  for (let k = 0; k < BATCH; k++) encodeFceuTcpFrame(k, frameData, stream, k * 9);
  const streamView = new DataView(stream.buffer);
  const rawStream = () => {
    for (let at = 0; at + 9 <= stream.length; at += 9) rawTcp(stream, streamView, at);
    sink = (sink + rawControllers[0]!) | 0;
  };
  suite.measure('raw DataView TCP stream', rawStream, { batch: BATCH, note: 'baseline: BATCH frames back to back' });
  const message = createFceuServerTcpMessage();
  const streamInto = () => {
    for (let at = 0; ; ) {
      const n = readFceuServerTcpMessageInto(message, stream, at);
      if (n === 0) break;
      sink = (sink + message.counter + message.frame.command) | 0;
      at += n;
    }
    sink = (sink + message.frame.controllers[0]!) | 0;
  };
  suite.measure('readFceuServerTcpMessageInto stream', streamInto, {
    batch: BATCH,
    baseline: 'raw DataView TCP stream',
    note: 'reused message; goal 0 B/op',
  });
  const streamAlloc = () => {
    for (let at = 0; ; ) {
      const r = readFceuServerTcpMessage(stream, at);
      if (r === undefined) break;
      kept = r;
      if (r.message.kind === 'frame') sink = (sink + r.message.counter + r.message.frame.command) | 0;
      at += r.size;
    }
  };
  suite.measure('readFceuServerTcpMessage stream', streamAlloc, {
    batch: BATCH,
    baseline: 'raw DataView TCP stream',
    note: 'allocating reader, messages kept',
  });
  paired('decodeFceuTcpFrameInto', rawTcpFrame, tcpFrameInto);
  paired('readFceuServerTcpMessageInto stream', rawStream, streamInto);
}

suite.finish();
if (sink === 42 && kept !== undefined) console.log('');
