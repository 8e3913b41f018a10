/**
 * Bytes on the wire per link (what one peer sends one other peer, per second), rollback sessions
 * over @netplay/transport-udp's core on the simulated network (wire version 2 of both), beside
 * GGPO's figure computed from its packet format for the same case (test/ggpo-model.ts): 2 and 4
 * players, held input / changing every frame / every 10 frames, 20 / 100 / 200 ms RTT, 0 / 5 % loss,
 * 62.5 fps, 2-byte inputs, 10 s after a 2 s warm-up. "payload": UDP payload; "wire": plus 28 bytes
 * of IPv4 + UDP headers per datagram. Each of our rows is a ratio to GGPO's row of the same case
 * (lower is better here: the ratio is ours / GGPO's).
 */
import { BenchSuite } from '@netplay/bench-kit';
import { ggpoLink, type InputPattern, IP_UDP_HEADER_BYTES, patternInputs } from '../test/ggpo-model.js';
import { UDP_FRAME_MS, UdpMesh } from '../test/udp-mesh.js';

const suite = new BenchSuite('rollback/wire');
const WARMUP = 125;
const TICKS = 625;
const seconds = (TICKS * UDP_FRAME_MS) / 1000;

for (const players of [2, 4]) {
  for (const pattern of ['held', 'every-frame', 'every-10'] as InputPattern[]) {
    for (const rtt of [20, 100, 200]) {
      for (const loss of [0, 0.05]) {
        const label = `${players}p ${pattern}, ${rtt} ms, ${loss * 100} %`;
        const g = ggpoLink({
          fps: 1000 / UDP_FRAME_MS,
          rttMs: rtt,
          loss,
          frames: WARMUP + TICKS,
          seed: rtt,
          inputOf: patternInputs(pattern, 7, 0, 2),
        });
        suite.record({ name: `GGPO ${label}: payload`, value: g.payloadBytesPerSec, unit: 'B/s' });
        suite.record({ name: `GGPO ${label}: wire`, value: g.wireBytesPerSec, unit: 'B/s' });
        const mesh = new UdpMesh(players, pattern, rtt + players, { latencyMs: rtt / 2, loss });
        for (let i = 0; i < WARMUP; i++) mesh.tick();
        mesh.resetCounters();
        const f0 = mesh.sessions[0]!.currentFrame;
        for (let i = 0; i < TICKS; i++) mesh.tick();
        const links = players * (players - 1);
        const bytes = mesh.sentBytes.reduce((a, b) => a + b, 0) / links / seconds;
        const datagrams = mesh.sentDatagrams.reduce((a, b) => a + b, 0) / links / seconds;
        const frames = mesh.sessions[0]!.currentFrame - f0;
        const note = `${datagrams.toFixed(1)} datagrams/s vs GGPO ${g.packetsPerSec.toFixed(1)}; ${frames}/${TICKS} frames run; ratio = ours / GGPO`;
        suite.record({
          name: `v2 ${label}: payload`,
          value: bytes,
          unit: 'B/s',
          baseline: `GGPO ${label}: payload`,
          note,
        });
        suite.record({
          name: `v2 ${label}: wire`,
          value: bytes + datagrams * IP_UDP_HEADER_BYTES,
          unit: 'B/s',
          baseline: `GGPO ${label}: wire`,
        });
      }
    }
  }
}
suite.finish();
