/** Status of one player's input for one frame, as given in every `advance` request. */
export const InputStatus = {
  /** The player's real input. */
  Confirmed: 0,
  /** A prediction: the real input has not arrived; the frame will be rolled back if it differs. */
  Predicted: 1,
  /** The player has left (or not joined yet) at this frame: all zero bytes, final. */
  Disconnected: 2,
} as const;
/** One of {@link InputStatus}. */
export type InputStatus = (typeof InputStatus)[keyof typeof InputStatus];
