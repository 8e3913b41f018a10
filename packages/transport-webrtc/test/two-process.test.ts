import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollUntil } from '@netplay/transport/conformance';
import { expect, it } from 'vitest';
import { connectWebRtcNode, LOOPBACK_RTC, listenSignaling } from '../src/server.js';

const here = dirname(fileURLToPath(import.meta.url));

it('a guest in this process and a host in another connect, echo both channels and see the close reason', async () => {
  const server = await listenSignaling();
  const child = spawn(
    process.execPath,
    ['--conditions=@netplay/source', '--import', 'tsx', join(here, 'peer-process.ts'), server.url, 'two-proc'],
    { cwd: join(here, '..'), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const events: Array<Record<string, unknown>> = [];
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const l of lines) if (l.trim()) events.push(JSON.parse(l) as Record<string, unknown>);
  });
  let exitCode: number | null | undefined;
  child.on('exit', (code) => {
    exitCode = code;
  });
  try {
    expect(await pollUntil(() => events.some((e) => e.event === 'ready'), 20_000)).toBe(true);
    const hostPid = events.find((e) => e.event === 'ready')?.pid;
    expect(hostPid).not.toBe(process.pid);
    const conn = connectWebRtcNode({
      signaling: { url: server.url, room: 'two-proc', peer: 'guest' },
      to: 'host',
      channels: [
        { name: 'control', kind: 'reliable' },
        { name: 'state', kind: 'unreliable' },
      ],
      rtc: LOOPBACK_RTC,
    });
    const got: string[] = [];
    conn.on('message', (m) => got.push(`${m.channel}:${m.data.length}:${m.data[0]}`));
    conn.send('control', new Uint8Array(100_000).fill(7));
    conn.send('state', new Uint8Array([9, 9, 9]));
    expect(await pollUntil(() => got.length === 2, 10_000)).toBe(true);
    expect(got.sort()).toEqual(['control:100000:7', 'state:3:9']);
    expect(events.some((e) => e.event === 'connection' && /^127\.0\.0\.1:\d+$/.test(String(e.from)))).toBe(true);
    conn.close('bye from the other process');
    expect(await pollUntil(() => exitCode !== undefined, 10_000)).toBe(true);
    expect(exitCode).toBe(0);
    expect(events.find((e) => e.event === 'close')).toEqual({
      event: 'close',
      code: 'remote',
      reason: 'bye from the other process',
    });
  } finally {
    child.kill();
    await server.close();
  }
});
