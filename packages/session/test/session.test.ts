import { describe, expect, it } from 'vitest';
import { FRAME_MS, inputSource, setup } from './harness.js';

describe('host + client', () => {
  it('complete the handshake and run 300 frames of rollback in agreement', () => {
    const { net, host, join } = setup(1);
    const client = join('alice');
    net.runUntil(() => client.state !== 'handshaking', 5000);
    expect(client.state).toBe('playing');
    expect(client.info?.slot).toBe(1);
    expect(client.info?.hostNick).toBe('host');
    expect(host.started).toBe(true);
    const hi = inputSource(11);
    const ci = inputSource(12);
    for (let i = 0; i < 400 && Math.min(host.frame, client.frame ?? 0) < 300; i++) {
      host.tick(hi());
      client.tick(ci());
      net.advance(FRAME_MS);
    }
    expect(host.frame).toBeGreaterThanOrEqual(300);
    expect(client.frame).toBeGreaterThanOrEqual(300);
  });
});
