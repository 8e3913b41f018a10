import { TransportError } from '@netplay/transport';
import type { PeerSignal, RtcPeerConnectionLike } from './rtc.js';

/** An SDP without its `a=candidate` and `a=end-of-candidates` lines (they are trickled instead). */
export function withoutCandidates(sdp: string): string {
  return sdp
    .split(/\r?\n/)
    .filter((line) => !line.startsWith('a=candidate') && !line.startsWith('a=end-of-candidates'))
    .join('\r\n');
}

/** What a {@link Negotiation} needs from its connection. */
export interface NegotiationHost {
  /** Sends a signal to the peer (through the signaling server). */
  signal(s: PeerSignal): void;
  /** Ends the connection with `error`. */
  fail(error: TransportError): void;
  /** Whether the connection is closed (negotiation then stops). */
  closed(): boolean;
  /** The answerer applied the offer: create the data channels now, before the answer. */
  offerApplied(): void;
}

/** Most remote candidates held before the remote description is set. */
const MAX_EARLY_CANDIDATES = 64;

/**
 * The offer/answer and trickle-ICE exchange of one peer connection. The `client` offers, the
 * `server` answers. Remote candidates that arrive before the remote description are held and added
 * after it. The offerer strips candidates from its offer and sends its own only after it has
 * applied the answer: a peer that could reach it earlier would finish ICE before the offerer knows
 * the answer's DTLS fingerprint (node-datachannel 0.33 then fails the DTLS handshake, about one
 * loopback connect in 20). That costs one signaling round trip.
 */
export class Negotiation {
  private remoteSet = false;
  private remoteReceived = false;
  private readonly early: PeerSignal[] = [];
  private readonly ownEarly: PeerSignal[] = [];

  constructor(
    private readonly pc: RtcPeerConnectionLike,
    private readonly role: 'client' | 'server',
    private readonly host: NegotiationHost,
  ) {
    pc.onicecandidate = (ev) => {
      const c = ev.candidate;
      if (!c?.candidate || host.closed()) return;
      const s: PeerSignal = {
        kind: 'candidate',
        candidate: c.candidate,
        sdpMid: c.sdpMid ?? null,
        sdpMLineIndex: c.sdpMLineIndex ?? null,
      };
      if (role === 'client' && !this.remoteSet) this.ownEarly.push(s);
      else host.signal(s);
    };
  }

  /** Client: creates the offer and sends it (the data channels must exist already). */
  async offer(): Promise<void> {
    try {
      const offer = await this.pc.createOffer();
      await this.pc.setLocalDescription(offer);
      if (this.host.closed()) return;
      this.host.signal({ kind: 'offer', sdp: withoutCandidates(this.pc.localDescription?.sdp ?? offer.sdp ?? '') });
    } catch (e) {
      this.host.fail(new TransportError('io', `cannot create an offer: ${(e as Error).message}`, { cause: e }));
    }
  }

  /** A signal from the peer. */
  handle(s: PeerSignal): void {
    if (s.kind === 'candidate') {
      if (!this.remoteSet) {
        if (this.early.length < MAX_EARLY_CANDIDATES) this.early.push(s);
        return;
      }
      this.pc
        .addIceCandidate({ candidate: s.candidate, sdpMid: s.sdpMid, sdpMLineIndex: s.sdpMLineIndex })
        .catch(() => {
          // A candidate the implementation cannot use is not fatal: ICE tries the others.
        });
      return;
    }
    const expected = this.role === 'server' ? 'offer' : 'answer';
    if (s.kind !== expected || this.remoteReceived) {
      this.host.fail(new TransportError('protocol', `unexpected ${s.kind} from the peer`));
      return;
    }
    this.remoteReceived = true;
    void (s.kind === 'offer' ? this.answer(s.sdp) : this.accept(s.sdp));
  }

  private async answer(sdp: string): Promise<void> {
    try {
      await this.setRemote({ type: 'offer', sdp });
      if (this.host.closed()) return;
      this.host.offerApplied();
      const answer = await this.pc.createAnswer();
      await this.pc.setLocalDescription(answer);
      if (this.host.closed()) return;
      this.host.signal({ kind: 'answer', sdp: this.pc.localDescription?.sdp ?? answer.sdp ?? '' });
    } catch (e) {
      this.host.fail(new TransportError('protocol', `bad offer: ${(e as Error).message}`, { cause: e }));
    }
  }

  private async accept(sdp: string): Promise<void> {
    try {
      await this.setRemote({ type: 'answer', sdp });
    } catch (e) {
      this.host.fail(new TransportError('protocol', `bad answer: ${(e as Error).message}`, { cause: e }));
    }
  }

  /** Sets the remote description, then adds the candidates that arrived before it and sends ours. */
  private async setRemote(description: { type: string; sdp: string }): Promise<void> {
    await this.pc.setRemoteDescription(description);
    if (this.host.closed()) return;
    this.remoteSet = true;
    for (const c of this.early.splice(0)) this.handle(c);
    for (const c of this.ownEarly.splice(0)) this.host.signal(c);
  }
}
