import type { ConnectionStats } from './contract.js';

/**
 * The writable counters behind a connection's live `stats` object, for transport authors: keep one
 * per connection, update its fields in place, and expose it as `ConnectionStats` (reading it then
 * allocates nothing). Extend it for extra counters.
 */
export class MutableConnectionStats implements ConnectionStats {
  rttMs = 0;
  rttVarMs = 0;
  rttSamples = 0;
  lossRate = 0;
  bytesSent = 0;
  bytesReceived = 0;
  packetsSent = 0;
  packetsReceived = 0;
  retransmissions = 0;
  sendQueueLength = 0;
  sendQueueBytes = 0;
}
