/** Name of the unreliable channel carrying inputs. */
export const INPUT_CHANNEL = 'rb-input';
/** Name of the reliable channel carrying control messages. */
export const CONTROL_CHANNEL = 'rb-control';
/** The channels a connection between two sessions must declare, in this order. */
export const ROLLBACK_CHANNELS = [
  {
    /** {@link INPUT_CHANNEL}: the INPUT messages (unacknowledged inputs, acks, time sync, checksums). */
    name: INPUT_CHANNEL,
    /** Unreliable: loss, duplicates and reordering are harmless, since later INPUT repeats unacknowledged inputs. */
    kind: 'unreliable',
  },
  {
    /** {@link CONTROL_CHANNEL}: host decisions (leave, enter, pause, load), savestates, spectator streams. */
    name: CONTROL_CHANNEL,
    /** Reliable and ordered: each control message is sent once, with no redundancy, and must arrive in order. */
    kind: 'reliable',
  },
] as const;

/** Hands one message to the transport (`Connection.send` copies the bytes, so may the callee). */
export type SendFn = (peer: string, channel: typeof INPUT_CHANNEL | typeof CONTROL_CHANNEL, data: Uint8Array) => void;

/** One of the two channels of a session. */
export type Channel = typeof INPUT_CHANNEL | typeof CONTROL_CHANNEL;
