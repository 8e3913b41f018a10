/**
 * Child process of hostile.bench.ts: 64 raw peers (from 127.0.0.2–41) connect to 127.0.0.1:<port>
 * and, one step per line read on stdin, (1) say one word each (`idle`), (2) announce 4 maximal
 * messages each and send their first fragment (`announce`), (3) send all of their first maximal
 * message but its last fragment (`fill`). Prints the step's name when it is done.
 */
import { createInterface } from 'node:readline';
import { fragmentSize, resolveConfig } from '../src/config.js';
import { encodeDataPacket, FrameType } from '../src/wire.js';
import { fragmentDatagram, type RawPeer, rawConnect } from './raw-peer.js';

const port = Number(process.argv[2]);
const channels = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
] as const;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const turn = () => new Promise<void>((r) => setImmediate(r));
const config = resolveConfig();
const max = config.maxMessageBytes;
const frags = Math.ceil(max / fragmentSize(config));
const peers: RawPeer[] = [];
let packet = 2;

const steps: Record<string, () => Promise<void>> = {
  async idle() {
    for (let i = 0; i < 64; i++) peers.push(await rawConnect(channels, port, 1000 + i, `127.0.0.${2 + (i % 40)}`));
    for (const p of peers) {
      const ping = encodeDataPacket(p.session, new Uint8Array([FrameType.Ping << 4]), { seq: 1 });
      p.socket.send(Buffer.from(ping), port, '127.0.0.1');
    }
    await sleep(200);
  },
  async announce() {
    for (let m = 1; m <= 4; m++) {
      for (const p of peers) p.socket.send(fragmentDatagram(p.session, packet, 0, m, max, 0), port, '127.0.0.1');
      packet++;
      await turn();
    }
    await sleep(200);
  },
  async fill() {
    for (let f = 1; f < frags - 1; f++) {
      for (const p of peers) p.socket.send(fragmentDatagram(p.session, packet, 0, 1, max, f), port, '127.0.0.1');
      packet++;
      await turn();
      if (f % 8 === 0) await sleep(1); // let the listener drain its socket
    }
    await sleep(300);
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  const step = steps[line.trim()];
  if (!step) break;
  await step();
  console.log(line.trim());
}
for (const p of peers) p.socket.close();
