import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { parseParams } from '../src/params.js';

describe('parseParams', () => {
  it('reads every parameter the e2e tests pass', () => {
    const p = parseParams('?host=ws%3A%2F%2F127.0.0.1%3A9000&nick=alice&bot=1&seconds=5&frames=600&seed=7');
    expect(p).toEqual({
      host: 'ws://127.0.0.1:9000',
      signal: undefined,
      room: undefined,
      ice: [],
      nick: 'alice',
      bot: true,
      seed: 7,
      seconds: 5,
      frames: 600,
      spectate: false,
      players: 2,
      password: undefined,
    });
  });

  it('reads the share-a-link parameters (signaling server, room, ICE servers)', () => {
    const p = parseParams(
      '?signal=wss%3A%2F%2Fsignal.example.org%2Fs&room=a1b2-c3&ice=stun%3Astun.example.org&ice=turn%3At.example.org&ice=http%3A%2F%2Fx',
    );
    expect(p.signal).toBe('wss://signal.example.org/s');
    expect(p.room).toBe('a1b2-c3');
    expect(p.ice).toEqual(['stun:stun.example.org', 'turn:t.example.org']);
    expect(parseParams('?room=a%20b').room).toBeUndefined();
    expect(parseParams(`?room=${'x'.repeat(65)}`).room).toBeUndefined();
    expect(parseParams('?signal=http://x').signal).toBeUndefined();
  });

  it('falls back to the defaults without a query', () => {
    const p = parseParams('');
    expect(p.host).toBeUndefined();
    expect(p.nick).toBe('web');
    expect(p.bot).toBe(false);
    expect(p.spectate).toBe(false);
    expect(p.seconds).toBeUndefined();
  });

  it('refuses hosts that are not WebSocket URLs', () => {
    expect(parseParams('?host=http://example.test').host).toBeUndefined();
    expect(parseParams('?host=javascript:alert(1)').host).toBeUndefined();
  });

  test.prop(
    [
      fc.dictionary(
        fc.constantFrom(
          'host',
          'nick',
          'bot',
          'seconds',
          'frames',
          'seed',
          'players',
          'spectate',
          'signal',
          'room',
          'ice',
        ),
        fc.string(),
      ),
    ],
    {
      numRuns: 200,
    },
  )('never throws and keeps every value in range on any query', (entries) => {
    const p = parseParams(new URLSearchParams(entries).toString());
    expect(p.nick.length).toBeGreaterThan(0);
    expect(p.nick.length).toBeLessThanOrEqual(32);
    expect(p.players).toBeGreaterThanOrEqual(2);
    expect(p.players).toBeLessThanOrEqual(4);
    if (p.seconds !== undefined) expect(p.seconds).toBeGreaterThan(0);
    if (p.frames !== undefined) expect(p.frames).toBeGreaterThan(0);
    if (p.seed !== undefined) expect(Number.isInteger(p.seed) && p.seed >= 0 && p.seed < 2 ** 32).toBe(true);
    if (p.host !== undefined) expect(p.host).toMatch(/^wss?:\/\//);
    if (p.signal !== undefined) expect(p.signal).toMatch(/^wss?:\/\//);
    if (p.room !== undefined) expect(p.room).toMatch(/^[A-Za-z0-9._~-]{1,64}$/);
    for (const u of p.ice) expect(u).toMatch(/^(stuns?|turns?):/);
  });
});
