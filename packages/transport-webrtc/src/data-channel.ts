import type { RtcDataChannelLike, RtcPeerConnectionLike } from './rtc.js';

/**
 * Creates one of a connection's negotiated data channels (both ends create it with the same `id`,
 * no in-band announcement): a reliable channel ordered, an unreliable one unordered without
 * retransmissions; binary messages arrive as `ArrayBuffer`s.
 */
export function openNegotiatedChannel(
  pc: RtcPeerConnectionLike,
  label: string,
  id: number,
  reliable: boolean,
): RtcDataChannelLike {
  const dc = pc.createDataChannel(
    label,
    reliable ? { negotiated: true, id, ordered: true } : { negotiated: true, id, ordered: false, maxRetransmits: 0 },
  );
  dc.binaryType = 'arraybuffer';
  return dc;
}
