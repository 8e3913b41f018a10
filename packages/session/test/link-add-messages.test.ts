import { fc, test } from '@fast-check/vitest';
import { DecodeError } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import {
  decodeLinkMessage,
  decodeSessionMessage,
  encodeChallenge,
  encodeLinkSlots,
  encodeLinks,
  isLinkMessage,
  LinkMessageType,
  NetplayClient,
  SESSION_CHANNELS,
  SESSION_CONTROL_CHANNEL,
} from '../src/index.js';
import { CONTENT, FRAME_MS, setup } from './harness.js';

const nick = fc.string({ minLength: 1, maxLength: 16 });
const address = fc.string({ maxLength: 60 });
const token = fc.uint8Array({ minLength: 8, maxLength: 8 });
const slot = fc.integer({ min: 0, max: 254 });

describe('link messages for a player entering the running game (types 25–27, protocol 5)', () => {
  test.prop([
    fc.integer({ min: 0, max: 255 }),
    slot,
    fc.array(fc.record({ slot, nick, dial: fc.boolean(), address, token }), { maxLength: 15 }),
  ])('LINK_ADD round-trips (LINKS body, type 25), through the session codec too', (round, mine, entries) => {
    const bytes = encodeLinks({ type: LinkMessageType.LinkAdd, round, slot: mine, entries });
    expect(bytes[0]).toBe(25);
    expect(isLinkMessage(bytes)).toBe(true);
    expect(decodeLinkMessage(bytes)).toEqual({ type: LinkMessageType.LinkAdd, round, slot: mine, entries });
    expect(decodeSessionMessage(bytes)).toEqual(decodeLinkMessage(bytes));
  });

  test.prop([
    fc.constantFrom(LinkMessageType.LinkAddSet, LinkMessageType.LinkAddKept),
    fc.integer({ min: 0, max: 255 }),
    fc.array(slot, { maxLength: 16 }),
  ])('LINK_ADD_SET and LINK_ADD_KEPT round-trip', (type, round, slots) => {
    const bytes = encodeLinkSlots({ type, round, slots });
    expect(decodeLinkMessage(bytes)).toEqual({ type, round, slots });
    // Every truncation throws DecodeError.
    for (let n = 0; n < bytes.length; n++) expect(() => decodeLinkMessage(bytes.subarray(0, n))).toThrow(DecodeError);
  });

  test.prop([fc.integer({ min: 25, max: 27 }), fc.uint8Array({ maxLength: 80 })], { numRuns: 2000 })(
    'any body after types 25–27 decodes or throws DecodeError',
    (type, body) => {
      const bytes = new Uint8Array([type, ...body]);
      try {
        expect(decodeLinkMessage(bytes).type).toBe(type);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
      }
    },
  );

  test.prop([fc.integer({ min: 20, max: 24 })])('types 20–24 and 28+ are no link messages', (type) => {
    expect(isLinkMessage(new Uint8Array([type]))).toBe(false);
    expect(isLinkMessage(new Uint8Array([type + 8]))).toBe(false);
  });
});

describe('link messages from a hostile host', () => {
  /** A fake host that answers the client's HELLO with `messages`; the client's state after 5 s. */
  function against(messages: readonly Uint8Array[]) {
    const env = setup(1);
    const fake = env.net.listen('fake', { channels: SESSION_CHANNELS });
    fake.on('connection', (conn) => {
      let sent = false;
      conn.on('message', () => {
        if (sent) return;
        sent = true;
        for (const m of messages) if (conn.state !== 'closed') conn.send(SESSION_CONTROL_CHANNEL, m);
      });
    });
    const c = new NetplayClient(env.net.connect('alice', 'fake', { channels: SESSION_CHANNELS }), {
      core: new TestCore({ players: 2 }),
      content: CONTENT,
      clock: env.net.clock,
      nick: 'alice',
      handshakeTimeoutMs: 3000,
    });
    for (let i = 0; i < 300; i++) {
      c.tick();
      env.net.advance(FRAME_MS);
    }
    return c;
  }

  // The fuzz property's counterexample (seed -606525926): a 1-byte LINKS before CHALLENGE stopped
  // the handshake timer of a client without links, which then waited forever.
  it.each([
    ['a truncated LINKS', [16]],
    ['a truncated LINK_SET', [19, 1]],
    ['LINK_ADD', [25, 1, 1, 0]],
    ['LINK_ADD_SET', [26, 1, 0]],
  ])('%s before CHALLENGE: the client refuses the host with protocol', (_, bytes) => {
    const c = against([new Uint8Array(bytes)]);
    expect(c.state).toBe('closed');
    expect(c.error?.code).toBe('protocol');
  });

  it('a malformed LINKS after CHALLENGE (client without links): protocol, not a stalled handshake', () => {
    const c = against([
      encodeChallenge({ passwordRequired: false, salt: 1, nick: 'alice', hostNick: 'h' }),
      new Uint8Array([16, 1]),
    ]);
    expect(c.state).toBe('closed');
    expect(c.error?.code).toBe('protocol');
  });
});
