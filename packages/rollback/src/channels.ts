/** Name of the unreliable channel carrying inputs. */
export const INPUT_CHANNEL = 'rb-input';
/** Name of the reliable channel carrying control messages. */
export const CONTROL_CHANNEL = 'rb-control';
/** The channels a connection between two sessions must declare, in this order. */
export const ROLLBACK_CHANNELS = [
  { name: INPUT_CHANNEL, kind: 'unreliable' },
  { name: CONTROL_CHANNEL, kind: 'reliable' },
] as const;

/** Hands one message to the transport (`Connection.send` copies the bytes, so may the callee). */
export type SendFn = (peer: string, channel: typeof INPUT_CHANNEL | typeof CONTROL_CHANNEL, data: Uint8Array) => void;

/** One of the two channels of a session. */
export type Channel = typeof INPUT_CHANNEL | typeof CONTROL_CHANNEL;
