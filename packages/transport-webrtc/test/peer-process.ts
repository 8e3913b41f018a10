/**
 * A host peer in its own Node process, for test/two-process.test.ts: listens in a signaling room,
 * echoes every message on the channel it came on, and prints one JSON line per event
 * (`ready`, `connection`, `close` with code and reason) on stdout. Exits when its first connection
 * closes. Arguments: signaling URL, room.
 */
import { LOOPBACK_RTC, listenWebRtcNode } from '../src/server.js';

const [url, room] = process.argv.slice(2);
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const listener = await listenWebRtcNode({
  signaling: { url: url!, room: room!, peer: 'host' },
  channels: [
    { name: 'control', kind: 'reliable' },
    { name: 'state', kind: 'unreliable' },
  ],
  rtc: LOOPBACK_RTC,
});
listener.on('connection', (conn) => {
  say({ event: 'connection', from: conn.remoteAddress });
  conn.on('message', (m) => conn.send(m.channel, m.data));
  conn.on('close', (e) => {
    say({ event: 'close', code: e.code, reason: e.reason });
    listener.close();
    setTimeout(() => process.exit(0), 100);
  });
});
say({ event: 'ready', pid: process.pid });
setTimeout(() => process.exit(3), 30_000).unref();
