import { describe, expect, it } from 'vitest';
import { FRAME_MS } from './harness.js';
import { type Incarnation, rejoinWorld } from './rejoin-harness.js';

type World = ReturnType<typeof rejoinWorld>;

function tick(w: World, incs: Incarnation[], n: number): void {
  const input = new Uint8Array([1, 0]);
  for (let i = 0; i < n; i++) {
    w.host.tick(input);
    for (const inc of incs) if (inc.alive && inc.client.state !== 'closed') inc.client.tick(input);
    w.net.advance(FRAME_MS);
  }
}

function settle(w: World, inc: Incarnation, others: Incarnation[] = []): void {
  for (let i = 0; i < 400 && inc.client.state === 'handshaking'; i++) tick(w, [inc, ...others], 1);
}

const LINK = { latencyMs: 10, jitterMs: 0, loss: 0 };

describe('refusal order: protocol → password → room (issue 15)', () => {
  it('a wrong password says so even when the game is full; the right one then reads server full', () => {
    const w = rejoinWorld(1, 'rollback', 2, LINK, { password: 'pw' });
    const ann = w.connect('ann', { password: 'pw' });
    settle(w, ann);
    expect(ann.client.state).toBe('playing');
    tick(w, [ann], 30);
    const wrong = w.connect('ben', { password: 'nope' });
    settle(w, wrong, [ann]);
    expect(wrong.client.error?.code).toBe('bad-password');
    expect(wrong.client.error?.message).toBe('wrong password');
    const none = w.connect('ben');
    settle(w, none, [ann]);
    expect(none.client.error?.code).toBe('bad-password');
    expect(none.client.error?.message).toBe('this session needs a password');
    const right = w.connect('ben', { password: 'pw' });
    settle(w, right, [ann]);
    expect(right.client.error?.code).toBe('server-full');
    expect(right.client.error?.message).toBe('server full: all 2 player slots are taken');
  });

  it('without a password a full game refuses at HELLO', () => {
    const w = rejoinWorld(2, 'rollback', 2, LINK);
    const ann = w.connect('ann');
    settle(w, ann);
    let challenged = false;
    const ben = w.connect('ben');
    ben.client.on('closed', () => {
      challenged = ben.client.error?.code !== 'server-full';
    });
    settle(w, ben, [ann]);
    expect(ben.client.error?.message).toBe('server full: all 2 player slots are taken');
    expect(challenged).toBe(false);
  });

  it('rollback: a player who left comes back as a player under its nick; a spectator asking for the nick meanwhile is renamed', () => {
    const w = rejoinWorld(3, 'rollback', 3, LINK);
    const ann = w.connect('ann');
    const ben = w.connect('ben');
    for (let i = 0; i < 400 && (ann.client.state !== 'playing' || ben.client.state !== 'playing'); i++)
      tick(w, [ann, ben], 1);
    tick(w, [ann, ben], 60);
    ben.client.close();
    tick(w, [ann], 60);
    // While ben is out, its nick is still the scheduler's id of a departed peer: a spectator is renamed.
    const watch = w.connect('ben', { spectate: true });
    settle(w, watch, [ann]);
    tick(w, [ann, watch], 120);
    expect(watch.client.state).toBe('spectating');
    expect(watch.client.info?.nick).toBe('ben (2)');
    expect(watch.client.frame ?? -1).toBeGreaterThan(60);
    const back = w.connect('ben');
    settle(w, back, [ann, watch]);
    expect(back.client.state).toBe('playing');
    expect(back.client.info?.nick).toBe('ben');
    expect(back.client.info?.slot).toBe(ben.client.info?.slot);
  });

  it('lockstep-cs: a killed player restarted with the same nick from the same address is back in its slot within 3 s', () => {
    const w = rejoinWorld(4, 'lockstep-cs', 3, { latencyMs: 20, jitterMs: 5, loss: 0.01 });
    const ann = w.connect('ann');
    const ben = w.connect('ben');
    for (let i = 0; i < 400 && (ann.client.state !== 'playing' || ben.client.state !== 'playing'); i++)
      tick(w, [ann, ben], 1);
    const slot = ben.client.info?.slot;
    tick(w, [ann, ben], 120);
    // Killed: its link goes silent and the process is gone; the host has not noticed yet.
    w.net.cutBoth(ben.endpoint, 'host');
    ben.alive = false;
    tick(w, [ann], 30);
    const start = w.net.clock.now();
    const left: string[] = [];
    w.host.on('peer-left', ({ nick, reason }) => left.push(`${nick}: ${reason}`));
    const joinedEvents: unknown[] = [];
    w.host.on('peer-joined', (e) => joinedEvents.push(e));
    const again = w.connect('ben');
    for (let i = 0; i < 200 && again.sums.size === 0; i++) tick(w, [ann, again], 1);
    expect(again.client.info?.nick).toBe('ben');
    expect(again.client.info?.slot).toBe(slot);
    expect(w.net.clock.now() - start).toBeLessThan(3000);
    expect(left).toEqual(['ben: closed: replaced: ben reconnected from the same address']);
    expect(joinedEvents).toEqual([{ nick: 'ben', slot, rejoined: true }]);
    // Its first frame is the host's state, and it plays on in agreement.
    tick(w, [ann, again], 120);
    let compared = 0;
    for (const [f, h] of again.sums)
      if (f <= again.final) {
        compared++;
        expect(h).toBe(w.hostSums.get(f));
      }
    expect(compared).toBeGreaterThan(100);
  });

  it('lockstep-cs: the same nick from the same address does not replace a live player (two players on one machine)', () => {
    const w = rejoinWorld(6, 'lockstep-cs', 3, LINK);
    const ann = w.connect('ann');
    settle(w, ann);
    tick(w, [ann], 60);
    const twin = w.connect('ann');
    settle(w, twin, [ann]);
    tick(w, [ann, twin], 60);
    expect(twin.client.info?.nick).toBe('ann (2)');
    expect(twin.client.info?.slot).not.toBe(ann.client.info?.slot);
    expect(ann.client.state).toBe('playing');
    expect(twin.client.state).toBe('playing');
  });

  it('lockstep-cs: the same nick from another address does not replace a live player', () => {
    const w = rejoinWorld(5, 'lockstep-cs', 2, LINK);
    const ann = w.connect('ann');
    settle(w, ann);
    tick(w, [ann], 30);
    // Another machine claiming the nick: renamed, and the only client slot is taken.
    const other = w.connect('ann', { from: 'mallory' });
    settle(w, other, [ann]);
    expect(other.client.error?.message).toBe('server full: all 2 player slots are taken');
    tick(w, [ann], 30);
    expect(ann.client.state).toBe('playing');
  });
});
