import type { Connection } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { encodeLinkHello, SESSION_CHANNELS, SESSION_CONTROL_CHANNEL } from '../src/index.js';
import { LINK_TIMEOUTS, meshSession, pairwiseDiffering, play } from './mesh-harness.js';

/** Closes of a raw connection: its reason once closed. */
function closeOf(c: Connection): { reason: string | undefined } {
  const box: { reason: string | undefined } = { reason: undefined };
  c.on('close', ({ reason }) => {
    box.reason = reason;
  });
  return box;
}

describe('direct links: fallback to the relay', () => {
  it('5 players, one client without links: its pairs keep the relay; when the host goes, the linked ones play on and it ends host-lost', () => {
    const env = meshSession(31, 5, { latencyMs: 10, jitterMs: 2, loss: 0 }, { noLinks: new Set(['p4']) });
    expect(env.watched.map((w) => w.client.state)).toEqual(['playing', 'playing', 'playing', 'playing']);
    let alive = true;
    play(env, 2500, 3, () => alive);
    // p4's messages to the others (and theirs to it) went through the host; the others' did not.
    expect(env.relayed.bytes).toBeGreaterThan(0);
    const framesAtLoss = env.host.frame;
    alive = false;
    for (const w of env.watched) env.net.cutBoth('host', w.name);
    play(env, 12_000, 4, () => alive);
    const [p1, p2, p3, p4] = env.watched;
    expect(p4?.ended?.code).toBe('host-lost');
    const hosts = new Set([p1, p2, p3].flatMap((w) => w?.hosts ?? []));
    expect(hosts.size).toBe(1);
    for (const w of [p1, p2, p3]) {
      expect(w?.client.state).toBe('playing');
      expect(w?.client.rollback?.confirmedFrame ?? 0).toBeGreaterThan(framesAtLoss + 300);
    }
    for (const p of pairwiseDiffering(env)) expect(p.differing, `${p.a} vs ${p.b}`).toBe(0);
  });

  it('a pair that cannot link in time (its path is cut) keeps the relay; the game starts after the timeout and agrees', () => {
    // p1 and p2 cannot reach each other directly; both reach the host and p3.
    const env = meshSession(
      32,
      4,
      { latencyMs: 10, jitterMs: 2, loss: 0 },
      { beforeJoin: (net) => net.cutBoth('p1', 'p2') },
    );
    expect(env.watched.map((w) => w.client.state)).toEqual(['playing', 'playing', 'playing']);
    play(env, 3000, 5, () => true);
    expect(env.relayed.bytes).toBeGreaterThan(0);
    for (const p of pairwiseDiffering(env)) {
      expect(p.differing, `${p.a} vs ${p.b}`).toBe(0);
      expect(p.compared).toBeGreaterThan(100);
    }
  });
});

describe('direct links: a player whose LINK_SET is late', () => {
  it('keeps what the others sent over the link before it (they started first): the game runs and agrees', () => {
    // The host's messages reach p2 300 ms after the others: p1 and p3 start and send to p2 first.
    const env = meshSession(
      35,
      4,
      { latencyMs: 5, jitterMs: 0, loss: 0 },
      {
        beforeJoin: (net) => net.setLink('host', 'p2', { latencyMs: 300 }),
      },
    );
    expect(env.watched.map((w) => w.client.state)).toEqual(['playing', 'playing', 'playing']);
    play(env, 4000, 14, () => true);
    expect(env.relayed.bytes).toBe(0);
    for (const w of env.watched) expect(w.client.rollback?.confirmedFrame ?? 0, w.name).toBeGreaterThan(150);
    for (const p of pairwiseDiffering(env)) {
      expect(p.differing, `${p.a} vs ${p.b}`).toBe(0);
      expect(p.compared).toBeGreaterThan(150);
    }
  });
});

describe('direct links: unauthenticated dialers', () => {
  /**
   * A 3-player session still setting its links up: p1 and p2 cannot reach each other, so their
   * pair never links and the host waits its 20 s before LINK_SET (p1's listener stays open).
   */
  function linking() {
    const env = meshSession(
      33,
      3,
      { latencyMs: 5, jitterMs: 0, loss: 0 },
      { hostLinks: { timeoutMs: 20_000 }, wait: false, beforeJoin: (net) => net.cutBoth('p1', 'p2') },
    );
    return env;
  }

  it('a dialer with a wrong token, a message that is no LINK_HELLO or an oversized one is closed with protocol; the players still link and play', () => {
    const env = linking();
    env.net.runUntil(() => env.net.listenerAt('p1') !== undefined, 5000);
    const bad = env.net.connect('evil', 'p1', { channels: SESSION_CHANNELS, timeouts: LINK_TIMEOUTS });
    const badBox = closeOf(bad);
    bad.on('open', () =>
      bad.send(
        SESSION_CONTROL_CHANNEL,
        encodeLinkHello({ round: 1, from: 2, to: 1, token: new Uint8Array(8).fill(7) }),
      ),
    );
    const junk = env.net.connect('evil2', 'p1', { channels: SESSION_CHANNELS, timeouts: LINK_TIMEOUTS });
    const junkBox = closeOf(junk);
    junk.on('open', () => junk.send('rb-input', new Uint8Array([0x11, 0, 0, 0])));
    // A message that starts like LINK_HELLO but is 64 kB: never held (a hello is 12 bytes).
    const big = env.net.connect('evil3', 'p1', { channels: SESSION_CHANNELS, timeouts: LINK_TIMEOUTS });
    const bigBox = closeOf(big);
    big.on('open', () => big.send(SESSION_CONTROL_CHANNEL, new Uint8Array(65_536).fill(17)));
    env.net.runUntil(() => env.watched.every((w) => w.client.state !== 'handshaking'), 30_000);
    expect(env.watched.map((w) => w.client.state)).toEqual(['playing', 'playing']);
    expect(badBox.reason).toMatch(/^protocol/);
    expect(junkBox.reason).toMatch(/^protocol/);
    expect(bigBox.reason).toMatch(/^protocol/);
    play(env, 2000, 6, () => true);
  });

  it('a silent dialer is closed after 5 s; past 4 per address and 16 in total, dialers are refused', () => {
    const env = linking();
    env.net.runUntil(() => env.net.listenerAt('p1') !== undefined, 5000);
    const from = (addr: string) => {
      const c = env.net.connect(addr, 'p1', { channels: SESSION_CHANNELS, timeouts: { disconnectMs: 60_000 } });
      return { c, box: closeOf(c) };
    };
    const same = Array.from({ length: 5 }, () => from('crowd'));
    env.net.advance(200);
    expect(same.filter((s) => s.box.reason?.startsWith('server-full')).length).toBe(1);
    const many = Array.from({ length: 14 }, (_, i) => from(`m${i}`));
    env.net.advance(200);
    // 4 from `crowd` + 12 others hold the 16 places: 2 more refused.
    expect(many.filter((s) => s.box.reason?.startsWith('server-full')).length).toBe(2);
    env.net.advance(5000);
    const held = [...same, ...many].filter((s) => !s.box.reason?.startsWith('server-full'));
    expect(held.length).toBe(16);
    for (const s of held) expect(s.box.reason).toMatch(/^timeout/);
  });
});

describe('after the hand-over', () => {
  it('chat goes through the new host in one order, and a player pauses and resumes every survivor', () => {
    const env = meshSession(34, 4, { latencyMs: 10, jitterMs: 2, loss: 0 });
    const chats = env.watched.map(() => [] as string[]);
    const pauses = env.watched.map(() => [] as string[]);
    env.watched.forEach((w, i) => {
      w.client.on('chat', (e) => chats[i]?.push(`${e.seq}:${e.nick}:${e.text}`));
      w.client.on('paused', () => pauses[i]?.push('paused'));
      w.client.on('resumed', () => pauses[i]?.push('resumed'));
    });
    let alive = true;
    play(env, 1500, 7, () => alive);
    env.host.chat('before');
    play(env, 500, 8, () => alive);
    alive = false;
    env.host.close();
    play(env, 3000, 9, () => alive);
    const [p1, p2, p3] = env.watched as [(typeof env.watched)[0], (typeof env.watched)[0], (typeof env.watched)[0]];
    expect(new Set([p1, p2, p3].map((w) => w?.hosts.at(-1))).size).toBe(1);
    p3.client.chat('after 1');
    p2.client.chat('after 2');
    play(env, 1000, 10, () => alive);
    p3.client.pause();
    play(env, 1000, 11, () => alive);
    const frozen = env.watched.map((w) => w.client.frame);
    play(env, 1000, 12, () => alive);
    expect(env.watched.map((w) => w.client.frame)).toEqual(frozen);
    p2.client.resume();
    play(env, 1000, 13, () => alive);
    for (const [i, w] of env.watched.entries())
      expect(w.client.frame ?? 0, w.name).toBeGreaterThan((frozen[i] ?? 0) + 30);
    const seen = chats.map((c) => c.join(' | '));
    expect(new Set(seen).size, seen.join('\n')).toBe(1);
    // The new host numbers on from the old host's last line, in the order the lines reach it.
    expect(chats[0]?.[0]).toBe('0:host:before');
    expect(chats[0]?.slice(1).sort((x, y) => x.slice(2).localeCompare(y.slice(2)))).toEqual([
      expect.stringMatching(/^[12]:p2:after 2$/),
      expect.stringMatching(/^[12]:p3:after 1$/),
    ]);
    for (const p of pauses) expect(p).toEqual(['paused', 'resumed']);
    for (const p of pairwiseDiffering(env)) expect(p.differing, `${p.a} vs ${p.b}`).toBe(0);
  });
});
