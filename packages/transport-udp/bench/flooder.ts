/**
 * Child process of hostile.bench.ts: connects to 127.0.0.1:<port> and sends 32-byte unreliable
 * messages packed into full datagrams as fast as it can for <ms> milliseconds, whatever the
 * listener answers (it keeps sending after being closed). Prints the messages sent as JSON.
 */
import { DATA_HEADER_BYTES } from '../src/wire.js';
import { packed, packUnreliable, rawConnect } from './raw-peer.js';

const port = Number(process.argv[2]);
const ms = Number(process.argv[3]);
const channels = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
] as const;
const peer = await rawConnect(channels, port, 0x0f100d);
if (peer.session === 0) throw new Error('flooder: handshake failed');
const per = packed(32);
const d = new Uint8Array(DATA_HEADER_BYTES + per * 40);
let seq = 0;
let sent = 0;
let inFlight = 0;
const end = Date.now() + ms;
while (Date.now() < end) {
  for (let i = 0; i < 64 && inFlight < 1024; i++) {
    seq = packUnreliable(d, peer.session, 1, seq, per, 32);
    inFlight++;
    peer.socket.send(Buffer.from(d), port, '127.0.0.1', () => inFlight--);
    sent += per;
  }
  await new Promise((r) => setImmediate(r));
}
peer.socket.close();
console.log(JSON.stringify({ sent }));
