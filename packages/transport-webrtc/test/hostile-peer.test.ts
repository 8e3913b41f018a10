import { fc } from '@fast-check/vitest';
import { type CloseEvent, channelSignature, TransportError } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { describe, expect, it } from 'vitest';
import {
  ControlType,
  NodeRTCPeerConnection,
  type PeerSignal,
  type RtcDataChannelLike,
  WebRtcConnection,
} from '../src/node.js';
import { encodeHello } from '../src/wire.js';

const CHANNELS = [
  { name: 'control', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
] as const;
const CONFIG = { iceServers: [], bindAddress: '127.0.0.1' };

/**
 * A raw node-datachannel peer that speaks just enough of the protocol to open a server-side
 * WebRtcConnection (offer, candidates, HELLO), then sends whatever a test wants on any of the
 * negotiated data channels (ids 0 control, 1 ping, 2 and 3 the two channels).
 */
type Hostile = { victim: WebRtcConnection; channels: RtcDataChannelLike[]; dispose(): void };

/**
 * {@link hostileOnce}, tried up to three times: on a loaded machine libdatachannel sometimes
 * refuses the raw peer's hand-made negotiation ("Got a remote candidate without ICE transport").
 * That is the test's own peer failing to connect, not the victim: only the setup is retried.
 */
async function hostile(): Promise<Hostile> {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await hostileOnce();
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

async function hostileOnce(): Promise<Hostile> {
  const pc = new NodeRTCPeerConnection(CONFIG);
  const victimPc = new NodeRTCPeerConnection(CONFIG);
  const toAttacker = (s: PeerSignal) => {
    if (s.kind === 'answer') void pc.setRemoteDescription({ type: 'answer', sdp: s.sdp }).catch(() => {});
    else if (s.kind === 'candidate') void pc.addIceCandidate(s).catch(() => {});
  };
  const victim = new WebRtcConnection(
    victimPc,
    'server',
    'webrtc:attacker',
    { channels: CHANNELS, rateLimits: false },
    toAttacker,
  );
  const channels = [0, 1, 2, 3].map((id) =>
    pc.createDataChannel(
      `x${id}`,
      id === 1 || id === 3
        ? { negotiated: true, id, ordered: false, maxRetransmits: 0 }
        : { negotiated: true, id, ordered: true },
    ),
  );
  pc.onicecandidate = (e) => {
    const c = e.candidate;
    if (c?.candidate)
      victim.handleSignal({
        kind: 'candidate',
        candidate: c.candidate,
        sdpMid: c.sdpMid ?? null,
        sdpMLineIndex: c.sdpMLineIndex ?? null,
      });
  };
  try {
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    victim.handleSignal({ kind: 'offer', sdp: pc.localDescription?.sdp ?? offer.sdp ?? '' });
    if (!(await pollUntil(() => channels[0]!.readyState === 'open', 5000, 1)))
      throw new Error('the raw peer did not connect in 5 s');
    channels[0]!.send(
      encodeHello(ControlType.hello, {
        maxMessageBytes: 1 << 20,
        maxUnreliableBytes: 1024,
        signature: channelSignature(CHANNELS),
      }),
    );
    if (!(await pollUntil(() => victim.state !== 'connecting', 5000, 1)))
      throw new Error('the victim did not open in 5 s');
  } catch (e) {
    victim.close();
    pc.close();
    throw e;
  }
  return {
    victim,
    channels,
    dispose() {
      victim.close();
      pc.close();
    },
  };
}

describe('a hostile raw peer', () => {
  it('arbitrary frames on any data channel are delivered or close the victim with a typed error; nothing throws', async () => {
    let closedWith = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.uint8Array({ minLength: 0, maxLength: 64 })), {
          minLength: 1,
          maxLength: 12,
        }),
        async (frames) => {
          const h = await hostile();
          try {
            expect(h.victim.state).toBe('open');
            let closed: CloseEvent | undefined;
            h.victim.on('close', (e) => {
              closed = e;
            });
            let delivered = 0;
            h.victim.on('message', () => {
              delivered++;
            });
            for (const [id, bytes] of frames) if (h.channels[id]!.readyState === 'open') h.channels[id]!.send(bytes);
            await pollUntil(() => closed !== undefined, 100, 1);
            if (closed) {
              closedWith++;
              // A protocol error, an oversized message, or a CLOSE frame the fuzzer happened to forge.
              if (closed.code === 'error') {
                expect(closed.error).toBeInstanceOf(TransportError);
                expect(['protocol', 'too-large']).toContain(closed.error?.code);
              } else {
                expect(['remote', 'timeout']).toContain(closed.code);
              }
            } else {
              expect(h.victim.state).toBe('open');
              expect(delivered).toBeLessThanOrEqual(frames.length);
            }
          } finally {
            h.dispose();
          }
        },
      ),
      { numRuns: 25 },
    );
    expect(closedWith).toBeGreaterThan(0);
  }, 180_000);

  it('a text message closes the victim with protocol; a forged PONG is ignored', async () => {
    const h = await hostile();
    try {
      let closed: CloseEvent | undefined;
      h.victim.on('close', (e) => {
        closed = e;
      });
      const pong = new Uint8Array(9);
      pong[0] = ControlType.pong;
      new DataView(pong.buffer).setFloat64(1, -1e9);
      h.channels[1]!.send(pong);
      await pollUntil(() => false, 50);
      expect(h.victim.stats.rttSamples).toBe(0);
      expect(h.victim.state).toBe('open');
      (h.channels[2] as unknown as { send(s: string): void }).send('hello');
      await pollUntil(() => closed !== undefined, 2000, 1);
      expect(closed?.code).toBe('error');
      expect(closed?.error?.code).toBe('protocol');
      expect(closed?.reason).toMatch(/text messages/);
    } finally {
      h.dispose();
    }
  });
});
