/**
 * Guesses a remote player's input for a frame it has not received yet. `last` is the newest
 * confirmed input of that player (undefined before the first one); write the guess into `out`
 * (`inputBytes` long, zeroed beforehand). Must be deterministic: only the arguments may matter.
 */
export type Predictor = (last: Uint8Array | undefined, frame: number, player: number, out: Uint8Array) => void;

/** The default (GGPO, RetroArch): the player keeps holding what they held last. */
export const repeatLastInput: Predictor = (last, _frame, _player, out) => {
  if (last !== undefined) out.set(last);
};

/** Predicts "nothing pressed" (all zero bytes). */
export const predictNoInput: Predictor = () => {};
