/**
 * Round-trip time estimation and retransmission timeout, as in RFC 6298: SRTT and RTTVAR with
 * gains 1/8 and 1/4, RTO = SRTT + max(G, 4·RTTVAR), clamped to [minRtoMs, maxRtoMs].
 */
export class RttEstimator {
  /** Smoothed RTT in ms (0 before the first sample). */
  srtt = 0;
  /** RTT variation in ms (0 before the first sample). */
  rttvar = 0;
  /** Number of samples taken. */
  samples = 0;

  constructor(
    /** Lower bound of the RTO in ms. */
    readonly minRtoMs = 20,
    /** Upper bound of the RTO in ms. */
    readonly maxRtoMs = 2000,
    /** RTO before any sample, in ms. */
    readonly initialRtoMs = 200,
    /** Clock granularity G in ms. */
    readonly granularityMs = 1,
  ) {}

  /** Adds one RTT measurement (ms). Negative or non-finite samples are ignored. */
  sample(rttMs: number): void {
    if (!(rttMs >= 0) || !Number.isFinite(rttMs)) return;
    if (this.samples === 0) {
      this.srtt = rttMs;
      this.rttvar = rttMs / 2;
    } else {
      this.rttvar = 0.75 * this.rttvar + 0.25 * Math.abs(this.srtt - rttMs);
      this.srtt = 0.875 * this.srtt + 0.125 * rttMs;
    }
    this.samples++;
  }

  /** The current retransmission timeout in ms. */
  rto(): number {
    if (this.samples === 0) return this.initialRtoMs;
    const rto = this.srtt + Math.max(this.granularityMs, 4 * this.rttvar);
    return Math.min(this.maxRtoMs, Math.max(this.minRtoMs, rto));
  }
}
