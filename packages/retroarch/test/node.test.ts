/** The node:net shells on loopback: our client joins our host, plays, and disconnects cleanly. */
import type { AddressInfo } from 'node:net';
import { encodeRetroArchInput } from '@netplay/protocol';
import { expect, it } from 'vitest';
import type { RetroArchClientEvent, RetroArchHostEvent } from '../src/index.js';
import { connectRetroArch, listenRetroArchHost, type RetroArchHostSocket } from '../src/node.js';

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!pred()) throw new Error(`timed out waiting for ${what}`);
}

it('connectRetroArch and listenRetroArchHost talk over a loopback socket', async () => {
  const hostEvents: RetroArchHostEvent[] = [];
  const relayed: number[] = [];
  let peer: RetroArchHostSocket | undefined;
  const server = await listenRetroArchHost({
    port: 0,
    host: { password: 'pw', salt: 0x1234, info: { contentCrc: 1, coreName: 'Nestopia', coreVersion: 'x' } },
    frame: () => 100,
    onEvent: (c, e) => {
      peer = c;
      if (e.type === 'relay') relayed.push(e.frame);
      else hostEvents.push(e);
    },
  });
  try {
    const { port } = server.address() as AddressInfo;
    const clientEvents: RetroArchClientEvent[] = [];
    const conn = await connectRetroArch({
      port,
      nick: 'me',
      password: 'pw',
      onEvent: (e) => clientEvents.push(e.type === 'input' ? { ...e, words: e.words.slice() } : e),
    });
    await until(() => conn.client.state === 'spectating', 'SYNC');
    expect(conn.client.hostFrame).toBe(100);
    conn.client.setInput([7]);
    conn.client.play();
    await until(() => conn.client.state === 'playing', 'MODE');
    const buf = new Uint8Array(20);
    for (let f = 100; f < 110; f++) peer?.relay(buf.subarray(0, encodeRetroArchInput(buf, 0, f, 0, [1])));
    await until(() => relayed.length >= 12, 'the client input');
    // MODE at frame 100; the client answers each host frame 100..109 with its input 2 frames ahead.
    expect(relayed).toEqual(Array.from({ length: 12 }, (_, i) => 100 + i));
    expect(clientEvents.filter((e) => e.type === 'input').map((e) => e.type === 'input' && e.frame)).toEqual(
      Array.from({ length: 10 }, (_, i) => 100 + i),
    );
    conn.close();
    expect(await conn.closed).toBeUndefined();
    await until(() => hostEvents.some((e) => e.type === 'closed'), 'the host to see the disconnect');
    expect(hostEvents.map((e) => e.type)).toEqual(['joined', 'playing', 'closed']);
    expect(hostEvents.at(-1)).toEqual({ type: 'closed' });
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

it('connectRetroArch rejects when nothing listens', async () => {
  const server = await listenRetroArchHost({
    port: 0,
    host: { info: { contentCrc: 0, coreName: 'x', coreVersion: '' } },
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  await expect(connectRetroArch({ port })).rejects.toMatchObject({ code: 'closed' });
});
