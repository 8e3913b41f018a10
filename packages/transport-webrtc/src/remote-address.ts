/**
 * The remote address of a WebRTC connection: an address the peer cannot choose, so that the
 * per-address limits of the layers above (`addressKey` of `@netplay/transport`) count WebRTC peers
 * by where they really are, as they count UDP and WebSocket peers. See the README, "Remote address".
 */

/** One entry of a stats report, as `getStats()` gives them (W3C `RTCStats` and its subtypes). */
export type RtcStatsLike = Readonly<Record<string, unknown>>;

/** What `getStats()` resolves to: the browser's `RTCStatsReport` and node-datachannel's `Map` both fit. */
export interface RtcStatsReportLike {
  /** Calls `callback` for every stat of the report. */
  forEach(callback: (stat: RtcStatsLike, id: string) => void): void;
}

/** The remote ICE candidate of the selected candidate pair, as the stats report it. */
export interface RemoteCandidate {
  /** `address` (or the older `ip`): an IP literal, an mDNS `.local` name, or absent when redacted. */
  readonly address: string | undefined;
  /** The candidate's UDP/TCP port (an integer), or `undefined` when the stats give none or a non-integer. */
  readonly port: number | undefined;
  /** `host`, `srflx`, `prflx` or `relay`. */
  readonly candidateType: string | undefined;
}

/**
 * Where a connection's `remoteAddress` came from: `ice` the remote candidate of the selected pair,
 * `signaling` the IP the signaling server saw the peer's socket come from, `relay` a TURN relay
 * candidate taken as it is (no signaling address known), `unknown` neither (the shared
 * `webrtc:<peer>` bucket, `addressKey` → `webrtc`), `pending` not resolved yet.
 */
export type RemoteAddressSource = 'ice' | 'signaling' | 'relay' | 'unknown' | 'pending';

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9a-f:.]{2,45}(%[0-9a-z_.-]{1,32})?$/i;

/** Whether `s` is an IPv4 or IPv6 literal (not a host name, not an mDNS `.local` name). */
export function isIpLiteral(s: string): boolean {
  if (IPV4.test(s)) return true;
  if (!IPV6.test(s) || s.indexOf(':') === s.lastIndexOf(':')) return false;
  const dot = s.lastIndexOf(':');
  const tail = s.slice(dot + 1).split('%')[0]!;
  return !tail.includes('.') || IPV4.test(tail);
}

/** `ip:port`, `[ipv6]:port`, or the IP alone without a port: forms `addressKey` reduces to the IP. */
export function formatAddress(ip: string, port?: number): string {
  const lower = ip.toLowerCase();
  if (port === undefined) return lower;
  return lower.includes(':') ? `[${lower}]:${port}` : `${lower}:${port}`;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * The remote candidate of the selected candidate pair in a stats report: the pair named by a
 * `transport` entry's `selectedCandidatePairId` (Chromium, node-datachannel), else a
 * `candidate-pair` with `selected: true` (Firefox), else a nominated `succeeded` one.
 */
export function selectedRemoteCandidate(report: RtcStatsReportLike): RemoteCandidate | undefined {
  const byId = new Map<string, RtcStatsLike>();
  let selectedId: string | undefined;
  const pairs: RtcStatsLike[] = [];
  report.forEach((stat, key) => {
    if (typeof stat !== 'object' || stat === null) return;
    byId.set(str(stat.id) ?? key, stat);
    if (stat.type === 'transport') selectedId ??= str(stat.selectedCandidatePairId);
    if (stat.type === 'candidate-pair') pairs.push(stat);
  });
  const pair =
    (selectedId !== undefined ? byId.get(selectedId) : undefined) ??
    pairs.find((p) => p.selected === true) ??
    pairs.find((p) => p.nominated === true && p.state === 'succeeded');
  const remoteId = pair ? str(pair.remoteCandidateId) : undefined;
  const remote = remoteId !== undefined ? byId.get(remoteId) : undefined;
  if (!remote) return undefined;
  return {
    address: str(remote.address) ?? str(remote.ip),
    port: typeof remote.port === 'number' && Number.isInteger(remote.port) ? remote.port : undefined,
    candidateType: str(remote.candidateType),
  };
}

/**
 * The rule. `candidate` is the selected pair's remote candidate (if the stats gave one), `signaled`
 * the IP the signaling server stamped on the peer's offer (if any), `fallback` `webrtc:<peer>`.
 * 1. A non-relay candidate whose address is an IP literal: `ip:port` (the path the data takes,
 *    proved by ICE's authenticated connectivity checks and DTLS: the peer cannot name an address
 *    it does not receive at).
 * 2. Otherwise (a TURN relay candidate is the TURN server's address, shared by all its users; an
 *    mDNS `.local` name or a redacted address is no address): the signaling server's IP.
 * 3. Otherwise a relay candidate as it is (peers on one TURN server share a key, as peers behind
 *    one NAT do), else `fallback`, which `addressKey` turns into the one shared key `webrtc`.
 */
export function chooseRemoteAddress(
  candidate: RemoteCandidate | undefined,
  signaled: string | undefined,
  fallback: string,
): {
  /** The chosen address: `ip:port` / `[ipv6]:port` for an ICE or relay candidate, the bare IP from signaling, or `fallback` as given. IPs lower-cased. */
  readonly address: string;
  /** Which rule chose it: `ice` (1), `signaling` (2), `relay` or `unknown` (3); never `pending`. */
  readonly source: RemoteAddressSource;
} {
  const ip = candidate?.address !== undefined && isIpLiteral(candidate.address) ? candidate.address : undefined;
  if (ip !== undefined && candidate?.candidateType !== 'relay') {
    return { address: formatAddress(ip, candidate?.port), source: 'ice' };
  }
  if (signaled !== undefined && isIpLiteral(signaled)) return { address: formatAddress(signaled), source: 'signaling' };
  if (ip !== undefined) return { address: formatAddress(ip, candidate?.port), source: 'relay' };
  return { address: fallback, source: 'unknown' };
}

/**
 * A connection's remote address: `fallback` until {@link resolve} has read the selected candidate
 * pair (once the data channels are open, before the connection is), then the result of
 * {@link chooseRemoteAddress}. A peer connection without `getStats`, or one that throws, gives the
 * signaling address or the fallback.
 */
export class RemoteAddress {
  private value: string;
  private from: RemoteAddressSource = 'pending';
  private started = false;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly fallback: string,
    private signaled: string | undefined,
  ) {
    this.value = fallback;
  }

  /** The signaling server's IP for the peer, learnt after construction (ignored once resolving). */
  stamp(ip: string): void {
    if (!this.started && isIpLiteral(ip)) this.signaled = ip;
  }

  get address(): string {
    return this.value;
  }

  get source(): RemoteAddressSource {
    return this.from;
  }

  /** Reads the selected pair from `getStats` (once); runs the `whenResolved` callbacks after. */
  resolve(getStats: (() => Promise<RtcStatsReportLike>) | undefined): void {
    if (this.started) return;
    this.started = true;
    const done = (candidate: RemoteCandidate | undefined) => {
      const chosen = chooseRemoteAddress(candidate, this.signaled, this.fallback);
      this.value = chosen.address;
      this.from = chosen.source;
      for (const f of this.waiting.splice(0)) f();
    };
    let stats: Promise<RtcStatsReportLike> | undefined;
    try {
      stats = getStats?.();
    } catch {
      stats = undefined;
    }
    if (!stats) {
      done(undefined);
      return;
    }
    stats.then(
      (report) => {
        let c: RemoteCandidate | undefined;
        try {
          c = selectedRemoteCandidate(report);
        } catch {
          c = undefined;
        }
        done(c);
      },
      () => done(undefined),
    );
  }

  /** Runs `f` once the address is resolved (at once if it is). */
  whenResolved(f: () => void): void {
    if (this.from !== 'pending') f();
    else this.waiting.push(f);
  }
}
