import { UdpRelay } from '@netplay/transport-udp/relay';
import type {
  RtcConfiguration,
  RtcIceCandidateInit,
  RtcPeerConnectionConstructor,
  RtcPeerConnectionLike,
  RtcSessionDescription,
} from '../src/index.js';

/** `a=candidate:… <ip> <port> typ …` → the parts before and after the address. */
const CANDIDATE = /^((?:a=)?candidate:\S+ \d+ (?:UDP|udp) \d+ )(\S+) (\d+)( typ .*)$/;

function withoutCandidates(sdp: string): string {
  return sdp
    .split(/\r?\n/)
    .filter((l) => !l.startsWith('a=candidate') && !l.startsWith('a=end-of-candidates'))
    .join('\r\n');
}

/**
 * Puts a seeded impairing UDP relay (transport-udp's test relay) in the ICE path as the only way
 * between two node-datachannel peers, *below* DTLS and SCTP: the client's peer connection learns
 * the host's UDP candidates rewritten to a relay port (one relay per host port, forwarding to it),
 * and nothing else (candidates inside a remote SDP are removed); the host's peer connection gets no
 * candidates of the client at all, so it only ever sees the relay's address (a peer-reflexive
 * candidate). Every datagram of the connection then crosses the relay, where `impair` and `cut`
 * apply loss, duplication, reordering, delay and a pulled cable.
 */
export class RelayPath {
  private readonly relays = new Map<number, Promise<UdpRelay>>();
  private impairment: Parameters<UdpRelay['impair']>[0] = {};

  constructor(private readonly seed: number) {}

  /** The constructor for the client (offerer) side. */
  client(Base: RtcPeerConnectionConstructor): RtcPeerConnectionConstructor {
    const path = this;
    return class {
      constructor(config: RtcConfiguration) {
        const pc: RtcPeerConnectionLike = new Base(config);
        const add = pc.addIceCandidate.bind(pc);
        const setRemote = pc.setRemoteDescription.bind(pc);
        pc.addIceCandidate = async (c: RtcIceCandidateInit) => {
          const m = CANDIDATE.exec(c.candidate ?? '');
          if (!m) return; // TCP or unparsable: not through the relay, so not at all.
          const relay = await path.relayTo(m[2]!, Number(m[3]));
          await add({ ...c, candidate: `${m[1]}${relay.host} ${relay.port}${m[4]}` });
        };
        pc.setRemoteDescription = (d: RtcSessionDescription) =>
          setRemote(d.sdp === undefined ? d : { type: d.type, sdp: withoutCandidates(d.sdp) });
        // biome-ignore lint/correctness/noConstructorReturn: a wrapped instance stands in for the real one
        return pc;
      }
    } as unknown as RtcPeerConnectionConstructor;
  }

  /** The constructor for the host (answerer) side: it never learns the client's own addresses. */
  host(Base: RtcPeerConnectionConstructor): RtcPeerConnectionConstructor {
    return class {
      constructor(config: RtcConfiguration) {
        const pc: RtcPeerConnectionLike = new Base(config);
        const setRemote = pc.setRemoteDescription.bind(pc);
        pc.addIceCandidate = async () => {};
        pc.setRemoteDescription = (d: RtcSessionDescription) =>
          setRemote(d.sdp === undefined ? d : { type: d.type, sdp: withoutCandidates(d.sdp) });
        // biome-ignore lint/correctness/noConstructorReturn: a wrapped instance stands in for the real one
        return pc;
      }
    } as unknown as RtcPeerConnectionConstructor;
  }

  /** Applies an impairment to both directions of every relay (now and later ones). */
  impair(impairment: Parameters<UdpRelay['impair']>[0]): void {
    this.impairment = { ...this.impairment, ...impairment };
    for (const r of this.relays.values()) void r.then((relay) => relay.impair(impairment));
  }

  /** Datagrams forwarded and dropped so far, all relays together. */
  async stats(): Promise<{ forwarded: number; dropped: number; duplicated: number; reordered: number }> {
    const total = { forwarded: 0, dropped: 0, duplicated: 0, reordered: 0 };
    for (const r of this.relays.values()) {
      const s = (await r).stats;
      total.forwarded += s.forwarded;
      total.dropped += s.dropped;
      total.duplicated += s.duplicated;
      total.reordered += s.reordered;
    }
    return total;
  }

  async close(): Promise<void> {
    for (const r of this.relays.values()) await (await r).close();
    this.relays.clear();
  }

  private relayTo(host: string, port: number): Promise<UdpRelay> {
    let r = this.relays.get(port);
    if (!r) {
      r = UdpRelay.start({
        targetHost: host,
        targetPort: port,
        seed: (this.seed + port) >>> 0,
        impairment: this.impairment,
      });
      this.relays.set(port, r);
    }
    return r;
  }
}
