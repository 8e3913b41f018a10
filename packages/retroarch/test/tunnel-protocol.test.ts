/** The tunnel codec: round trips, fuzzed bytes, addresses and ids. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeTunnelMessage,
  encodeTunnelMessage,
  parseTunnelId,
  parseTunnelRelayAddress,
  RetroArchTunnelError,
  TUNNEL_OUTDATED_REPLY,
  type TunnelMessage,
  tunnelAddressBytes,
  tunnelAddressText,
  tunnelIdHex,
} from '../src/index.js';

const id = fc.uint8Array({ minLength: 12, maxLength: 12 });
const message: fc.Arbitrary<TunnelMessage> = fc.oneof(
  id.map((i) => ({ type: 'session' as const, id: i })),
  id.map((i) => ({ type: 'link' as const, id: i })),
  id.map((i) => ({ type: 'address' as const, id: i })),
  fc.constant({ type: 'ping' as const }),
  fc.constant({ type: 'netplay' as const }),
);

describe('tunnel codec', () => {
  it('decodes what it encodes, from any offset, and reports the exact size (peer direction)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), message, fc.uint8Array({ maxLength: 8 }), (pre, m, post) => {
        const bytes = encodeTunnelMessage(m);
        const buf = new Uint8Array([...pre, ...bytes, ...post]);
        const r = decodeTunnelMessage(buf, pre.length, 'peer');
        expect(r.kind).toBe('message');
        if (r.kind !== 'message') return;
        expect(r.size).toBe(bytes.length);
        expect(r.message).toEqual(m);
        // Every proper prefix is incomplete, never an error.
        for (let n = 0; n < bytes.length; n++)
          expect(decodeTunnelMessage(bytes.subarray(0, n)).kind).toBe('incomplete');
      }),
      { numRuns: 300 },
    );
  });

  it("round-trips the relay's 32-byte RATA reply", () => {
    fc.assert(
      fc.property(id, fc.uint8Array({ minLength: 16, maxLength: 16 }), (i, a) => {
        const bytes = encodeTunnelMessage({ type: 'address', id: i, address: a });
        expect(bytes.length).toBe(32);
        const r = decodeTunnelMessage(bytes, 0, 'relay');
        expect(r).toEqual({ kind: 'message', message: { type: 'address', id: i, address: a }, size: 32 });
      }),
      { numRuns: 200 },
    );
  });

  it('never throws on arbitrary bytes: a message no longer than the input, incomplete, or a typed error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.constantFrom('peer' as const, 'relay' as const), (b, from) => {
        const r = decodeTunnelMessage(b, 0, from);
        if (r.kind === 'message') expect(r.size).toBeLessThanOrEqual(b.length);
        else if (r.kind === 'incomplete') expect(r.need).toBeGreaterThan(b.length);
        else {
          expect(r.error).toBeInstanceOf(RetroArchTunnelError);
          expect(r.error.code).toBe('unknown-magic');
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('names the wire bytes', () => {
    const i = Uint8Array.from({ length: 12 }, (_, k) => k + 1);
    expect(Buffer.from(encodeTunnelMessage({ type: 'session', id: i })).toString('hex')).toBe(
      `52415453${tunnelIdHex(i)}`,
    );
    expect(Buffer.from(encodeTunnelMessage({ type: 'ping' })).toString('hex')).toBe('52415450');
    expect(Buffer.from(TUNNEL_OUTDATED_REPLY).toString('hex')).toBe(`52414e50${'00'.repeat(20)}`);
    const bad = decodeTunnelMessage(Buffer.from('GET / HTTP/1.1'));
    expect(bad.kind === 'error' && bad.error.message).toMatch(/unknown tunnel magic "GET "/);
    expect(() => encodeTunnelMessage({ type: 'link', id: new Uint8Array(3) })).toThrow(/12 bytes/);
  });

  it('encodes addresses as RATA carries them (IPv4 as ::ffff:a.b.c.d)', () => {
    expect(Buffer.from(tunnelAddressBytes('127.0.0.3')).toString('hex')).toBe(`${'00'.repeat(10)}ffff7f000003`);
    expect(tunnelAddressText(tunnelAddressBytes('10.1.2.3'))).toBe('10.1.2.3');
    expect(tunnelAddressText(tunnelAddressBytes('::ffff:10.1.2.3'))).toBe('10.1.2.3');
    expect(tunnelAddressText(tunnelAddressBytes('2001:db8::1'))).toBe('2001:db8:0:0:0:0:0:1');
    expect(tunnelAddressText(tunnelAddressBytes('::1'))).toBe('0:0:0:0:0:0:0:1');
    expect(tunnelAddressText(tunnelAddressBytes('not an address'))).toBe('0:0:0:0:0:0:0:0');
    fc.assert(
      fc.property(fc.ipV4(), (a) => {
        expect(tunnelAddressText(tunnelAddressBytes(a))).toBe(a);
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.ipV6(), (a) => {
        const words = tunnelAddressText(tunnelAddressBytes(a));
        // Written back and parsed again it gives the same 16 bytes.
        expect(tunnelAddressBytes(words.includes('.') ? `::ffff:${words}` : words)).toEqual(tunnelAddressBytes(a));
      }),
      { numRuns: 200 },
    );
  });

  it('parses session ids and relay addresses, with typed errors', () => {
    expect(tunnelIdHex(parseTunnelId('0102030405060708090a0b0c'))).toBe('0102030405060708090a0b0c');
    for (const bad of ['', '00'.repeat(12), 'xyz', '01'.repeat(13)]) {
      expect(() => parseTunnelId(bad)).toThrow(RetroArchTunnelError);
    }
    expect(parseTunnelRelayAddress('127.0.0.1:55435')).toEqual({ host: '127.0.0.1', port: 55435 });
    expect(parseTunnelRelayAddress('[::1]:9')).toEqual({ host: '::1', port: 9 });
    for (const bad of ['nohost', 'a:0', 'a:70000', '::1:5']) {
      try {
        parseTunnelRelayAddress(bad);
        expect.unreachable(bad);
      } catch (e) {
        expect((e as RetroArchTunnelError).code).toBe('bad-address');
      }
    }
  });
});
