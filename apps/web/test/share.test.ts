import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { parseParams } from '../src/params.js';
import { DEFAULT_SIGNAL_PORT, defaultSignalUrl, newPeerName, newRoomName, shareLink } from '../src/share.js';

describe('share-a-link helpers', () => {
  it('room names are np- and 20 hex digits from the random source, valid signaling names', () => {
    const name = newRoomName((b) => b.fill(0xab));
    expect(name).toBe(`np-${'ab'.repeat(10)}`);
    expect(newRoomName()).toMatch(/^np-[0-9a-f]{20}$/);
    expect(newRoomName()).not.toBe(newRoomName());
    expect(newPeerName((b) => b.fill(1))).toBe('guest-010101010101');
  });

  it('the default signaling server is port 8787 of the page host, unless configured', () => {
    expect(defaultSignalUrl({ protocol: 'http:', hostname: 'localhost' })).toBe(
      `ws://localhost:${DEFAULT_SIGNAL_PORT}`,
    );
    expect(defaultSignalUrl({ protocol: 'https:', hostname: 'game.example' })).toBe('wss://game.example:8787');
    expect(defaultSignalUrl({ protocol: 'http:', hostname: '::1' })).toBe('ws://[::1]:8787');
    expect(defaultSignalUrl({ protocol: 'http:', hostname: 'x' }, 'wss://signal.example/s')).toBe(
      'wss://signal.example/s',
    );
    expect(defaultSignalUrl({ protocol: 'http:', hostname: 'x' }, 'javascript:1')).toBe('ws://x:8787');
  });

  it('a share link keeps only the signaling server, the room and the ICE servers', () => {
    const link = shareLink('http://127.0.0.1:5173/?signal=ws%3A%2F%2Fa&bot=1&frames=9#x', 'ws://a:1', 'np-00', [
      'stun:s.example',
    ]);
    expect(link).toBe('http://127.0.0.1:5173/?signal=ws%3A%2F%2Fa%3A1&room=np-00&ice=stun%3As.example');
  });

  test.prop([fc.webUrl(), fc.constantFrom('ws', 'wss'), fc.domain(), fc.array(fc.domain(), { maxLength: 3 })], {
    numRuns: 100,
  })('the page parses back what a share link carries', (page, scheme, host, stuns) => {
    const signal = `${scheme}://${host}:8787`;
    const room = newRoomName();
    const ice = stuns.map((h) => `stun:${h}`);
    const p = parseParams(new URL(shareLink(page, signal, room, ice)).search);
    expect(p.signal).toBe(signal);
    expect(p.room).toBe(room);
    expect(p.ice).toEqual(ice);
    expect(p.host).toBeUndefined();
    expect(p.bot).toBe(false);
  });
});
