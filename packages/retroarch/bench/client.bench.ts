/**
 * The client's per-frame path: a spectator receiving the host's INPUT frames (one joypad word), and
 * a player that also answers each with its own INPUT, in frames/s, next to a raw loop that only
 * reframes and decodes the same bytes (FrameDecoder + decodeRetroArchInputInto) in the same run.
 * Goal: spectator ratio ≥ 0.5 and 0 B/op (the events are reused objects). The player's B/op is
 * the one thing it allocates: the `Uint8Array` that `takeOutput()` returns, one per batch here
 * (5 100 bytes of 256 INPUT frames: a 5 120-byte backing store and a 184-byte object, ≈ 20.7 B
 * per frame). That copy is the contract: the caller hands it to a transport that keeps it until
 * it is written (`net.Socket.write` does not copy), so the queue cannot lend out its own buffer.
 * A shell that flushes every frame pays it once per frame (≈ 220 B for one 20-byte INPUT).
 */
import { BenchSuite } from '@netplay/bench-kit';
import {
  decodeRetroArchInputInto,
  encodeRetroArchHeader,
  encodeRetroArchInput,
  encodeRetroArchMessageToBytes,
  FrameDecoder,
  RetroArchInputFrame,
  retroArchHostHeader,
  retroArchInputSize,
} from '@netplay/protocol';
import { RetroArchClient } from '../src/index.js';

const BATCH = 256;
const suite = new BenchSuite('retroarch/client');
let sink = 0;

function handshake(): Uint8Array {
  const header = new Uint8Array(24);
  encodeRetroArchHeader(retroArchHostHeader(), header);
  const parts = [
    header,
    encodeRetroArchMessageToBytes({ type: 'nick', nick: 'rahost' }),
    encodeRetroArchMessageToBytes({ type: 'info', contentCrc: 1, coreName: 'Nestopia', coreVersion: '1' }),
    encodeRetroArchMessageToBytes({
      type: 'sync',
      frame: 0,
      paused: false,
      client: 1,
      devices: new Array<number>(16).fill(1),
      shareModes: new Array<number>(16).fill(0),
      deviceClients: [1, ...new Array<number>(15).fill(0)],
      nick: 'bench',
      sram: new Uint8Array(0),
    }),
  ];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * BATCH host INPUT frames (one joypad word), encoded once; `fill` renumbers them in place for each
 * round from `first` on. Renumbering with a local DataView (rather than encoding again) keeps the
 * driver out of the figures: a fresh `[0x10]` literal per frame costs 32 B once
 * `encodeRetroArchInput` also serves the client and is no longer inlined here, and alternating
 * targets make the protocol's cached write DataView be rebuilt twice per batch.
 */
const size = retroArchInputSize(1);
const frames = new Uint8Array(size * BATCH);
const framesView = new DataView(frames.buffer);
for (let k = 0; k < BATCH; k++) encodeRetroArchInput(frames, k * size, k, 0, [0x10]);
function fill(first: number): void {
  for (let k = 0; k < BATCH; k++) framesView.setUint32(k * size + 8, first + k);
}

const raw = new FrameDecoder();
const rawFrame = new RetroArchInputFrame();
let rawNext = 0;
suite.measure(
  'raw reframe + decode',
  () => {
    fill(rawNext);
    rawNext += BATCH;
    raw.push(frames);
    while (raw.readFrame()) {
      decodeRetroArchInputInto(rawFrame, raw.bytes, raw.payloadOffset, raw.payloadLength);
      sink = (sink + rawFrame.words[0]!) | 0;
    }
  },
  { batch: BATCH, note: 'baseline' },
);

function client(play: boolean): { c: RetroArchClient; next: number } {
  const c = new RetroArchClient({
    onEvent: (e) => {
      if (e.type === 'input') sink = (sink + e.words[0]!) | 0;
    },
  });
  c.start(0);
  c.receive(handshake(), 0);
  c.takeOutput();
  if (play) {
    c.setInput([0x100]);
    c.play();
    c.receive(
      encodeRetroArchMessageToBytes({
        type: 'mode',
        frame: 1,
        you: true,
        playing: true,
        slave: false,
        client: 1,
        devices: 2,
        shareModes: new Array<number>(16).fill(0),
        nick: 'bench',
      }),
      0,
    );
    c.takeOutput();
  }
  return { c, next: 1 };
}

const spectator = client(false);
suite.measure(
  'RetroArchClient spectator receive',
  () => {
    fill(spectator.next);
    spectator.next += BATCH;
    spectator.c.receive(frames, 0);
  },
  { batch: BATCH, baseline: 'raw reframe + decode', note: 'goal ratio ≥ 0.5, 0 B/op' },
);

const player = client(true);
suite.measure(
  'RetroArchClient player receive + own INPUT',
  () => {
    fill(player.next);
    player.next += BATCH;
    player.c.receive(frames, 0);
    sink = (sink + (player.c.takeOutput()?.length ?? 0)) | 0;
  },
  {
    batch: BATCH,
    baseline: 'raw reframe + decode',
    note: 'B/op: only the copy takeOutput hands out (the caller keeps it), one per batch',
  },
);

if (sink === 0.5) console.log(sink);
suite.finish();
