import { DecodeError } from '@netplay/protocol';
import { describe, expect, it } from 'vitest';
import { EndAgreement, encodeEnd } from '../src/end-agreement.js';
import { CONTROL_CHANNEL, INPUT_CHANNEL } from '../src/index.js';
import { PeerSet } from '../src/peer-set.js';
import { Remote } from '../src/remote.js';

const ASK = 0x01;
const HOST = 0x02;
const FINAL = 0x04;

function setup(ids: string[]) {
  const sent: Array<{ to: string; data: Uint8Array }> = [];
  const channels: string[] = [];
  const peers = new PeerSet((to, ch, data) => {
    sent.push({ to, data: data.slice() });
    channels.push(ch);
  }, 0);
  for (const [i, id] of ids.entries()) peers.add(new Remote(id, i + 1, 0));
  const remote = (id: string) => peers.byPeer.get(id)!;
  return { peers, sent, channels, remote, agreement: new EndAgreement(peers, 500) };
}

describe('end agreement of a group without quorum (unit)', () => {
  it('alone: ends at once at its own frame; host-lost unless it is the host', () => {
    const { agreement } = setup(['a']);
    agreement.start(0, 40, false, () => false);
    expect(agreement.settle(0, 40, false)).toEqual({ frame: 40, reason: 'host-lost' });
    agreement.reset();
    agreement.start(0, 40, true, () => false);
    expect(agreement.settle(0, 40, true)).toEqual({ frame: 40, reason: 'partitioned' });
  });

  it('waits for every member asked to start its own end, then takes the highest final frame and the host flag of any', () => {
    const { agreement, sent, channels, remote } = setup(['a', 'b']);
    agreement.start(0, 40, false, () => true);
    // Each on the reliable channel and, as a copy, on the unreliable one.
    expect(sent.map((s, i) => [s.to, s.data[1], channels[i]])).toEqual([
      ['a', ASK, CONTROL_CHANNEL],
      ['a', ASK, INPUT_CHANNEL],
      ['b', ASK, CONTROL_CHANNEL],
      ['b', ASK, INPUT_CHANNEL],
    ]);
    // Plain answers: a and b still finalize (their frames may pass what they said), so the wait goes on.
    agreement.onEnd(remote('a'), encodeEnd(0, 41), 40, false);
    agreement.onEnd(remote('b'), encodeEnd(HOST, 41), 40, false);
    expect(agreement.settle(10, 40, false)).toBeUndefined();
    // Their own ends (ASK: they stopped finalizing).
    agreement.onEnd(remote('a'), encodeEnd(ASK, 42), 40, false);
    expect(agreement.settle(15, 40, false)).toBeUndefined();
    agreement.onEnd(remote('b'), encodeEnd(ASK | HOST, 41), 40, false);
    expect(agreement.settle(20, 40, false)).toEqual({ frame: 42, reason: 'partitioned' });
  });

  it('an END heard before its own start settles the wait if it was the member’s own end (ASK) or final; an ASK is answered with this peer frame', () => {
    const { agreement, sent, remote } = setup(['a', 'b']);
    agreement.onEnd(remote('a'), encodeEnd(ASK, 45), 40, false);
    expect(sent).toEqual([
      { to: 'a', data: encodeEnd(0, 40) },
      { to: 'a', data: encodeEnd(0, 40) },
    ]);
    agreement.onEnd(remote('b'), encodeEnd(FINAL, 44), 40, false);
    agreement.start(100, 40, false, () => true);
    // a started its end before this peer asked (its frame is its last); b ended already (FINAL).
    expect(agreement.settle(100, 40, false)).toEqual({ frame: 45, reason: 'host-lost' });
  });

  it('bounded: a member that never answers is waited on for waitMs at most; a member that left is not', () => {
    const { agreement, remote } = setup(['a', 'b']);
    agreement.start(0, 40, false, () => true);
    agreement.onEnd(remote('a'), encodeEnd(0, 43), 40, false);
    expect(agreement.settle(499, 40, false)).toBeUndefined();
    expect(agreement.settle(500, 40, false)).toEqual({ frame: 43, reason: 'host-lost' });
    expect(agreement.overdue(999)).toBe(false);
    expect(agreement.overdue(1000)).toBe(true);
    agreement.reset();
    agreement.start(0, 40, false, () => true);
    remote('b').connected = false;
    agreement.onEnd(remote('a'), encodeEnd(0, 41), 40, false);
    expect(agreement.settle(1, 40, false)).toBeUndefined();
    agreement.onEnd(remote('a'), encodeEnd(ASK, 41), 40, false);
    expect(agreement.settle(2, 40, false)).toEqual({ frame: 41, reason: 'host-lost' });
  });

  it('an ASK is re-sent on the unreliable channel, 4 times within the wait, to those whose own end is not heard only', () => {
    const { agreement, sent, channels, remote } = setup(['a', 'b']);
    agreement.start(0, 40, false, () => true);
    agreement.onEnd(remote('a'), encodeEnd(ASK, 42), 40, false);
    sent.length = 0;
    channels.length = 0;
    for (let now = 10; now < 500; now += 10) expect(agreement.settle(now, 40, false)).toBeUndefined();
    expect(sent.map((s, i) => [s.to, s.data[1], channels[i]])).toEqual(
      [1, 2, 3, 4].map(() => ['b', ASK, INPUT_CHANNEL]),
    );
    expect(agreement.settle(500, 40, false)).toEqual({ frame: 42, reason: 'host-lost' });
  });

  it('a late copy of an earlier END does not undo a FINAL heard', () => {
    const { agreement, remote } = setup(['a']);
    agreement.onEnd(remote('a'), encodeEnd(FINAL | HOST, 44), 40, false);
    agreement.onEnd(remote('a'), encodeEnd(ASK | HOST, 43), 40, false);
    agreement.start(100, 40, false, () => true);
    expect(agreement.settle(100, 40, false)).toEqual({ frame: 44, reason: 'partitioned' });
  });

  it('a malformed END is a DecodeError', () => {
    const { agreement, remote } = setup(['a']);
    expect(() => agreement.onEnd(remote('a'), new Uint8Array([19, 0, 0]), 40, false)).toThrow(DecodeError);
    expect(() => agreement.onEnd(remote('a'), new Uint8Array([19, 8, 0, 0, 0, 1]), 40, false)).toThrow(DecodeError);
  });
});
