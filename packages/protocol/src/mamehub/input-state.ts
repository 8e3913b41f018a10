/**
 * MAMEHub's input state (seed 000): for every input port of the machine, in port order, the
 * default and current digital masks and the port's analog devices. All clients of a game run
 * the same machine, so they agree on the shape (ports and analog devices per port).
 */

/** One analog device of a port (a MAME `analog_field_state`). */
export interface MameAnalogState {
  /** Accumulated delta since the last frame (int32). */
  accumulatedDelta: number;
  /** Previous value, for inertia (int32). */
  previousValue: number;
  /** Sensitivity; the lower, the more sensitive (int32). */
  sensitivity: number;
  /** Whether the client wants this input reversed. */
  reverse: boolean;
}

/** One input port. */
export interface MamePortState {
  /** The default digital mask (uint32; client-specific, hence sent). */
  defaultMask: number;
  /**
   * The current digital mask (uint32): one bit per digital input, set while it is active
   * (pressed), whatever the port's active-low/high polarity. Merging ORs it.
   */
  currentMask: number;
  /** The port's analog devices, in MAME's order. */
  analogs: MameAnalogState[];
}

/** A client's input state: all input ports in MAME's order. */
export type MameInputState = MamePortState[];

/** The shape of an input state: the number of analog devices of each port, in port order. */
export type MameInputShape = readonly number[];

/** Thrown when input states of different shapes are combined. */
export class MameInputShapeError extends Error {
  /** Always `'MameInputShapeError'`: starts `String(error)` and the stack, and identifies it where `instanceof` fails. */
  override readonly name = 'MameInputShapeError';
  /** Always `shape-mismatch`. */
  readonly code = 'shape-mismatch';
}

/** The shape of `state`. */
export function mameInputShape(state: readonly MamePortState[]): number[] {
  return state.map((p) => p.analogs.length);
}

/** A state of the given shape with every field zero (all inputs at rest, as MAMEHub sends for other players). */
export function createMameInputState(shape: MameInputShape): MameInputState {
  return shape.map((analogs) => ({
    defaultMask: 0,
    currentMask: 0,
    analogs: Array.from({ length: analogs }, () => ({
      accumulatedDelta: 0,
      previousValue: 0,
      sensitivity: 0,
      reverse: false,
    })),
  }));
}

function sameShape(a: readonly MamePortState[], b: readonly MamePortState[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.analogs.length !== b[i]!.analogs.length) return false;
  return true;
}

/**
 * MAMEHub's merge: the bitwise OR of several clients' input states, written into `out` (which
 * must have the same shape; nothing is allocated). Precisely, field by field:
 *
 * - `defaultMask`, `currentMask`: bitwise OR of the uint32 masks;
 * - `accumulatedDelta`, `previousValue`, `sensitivity`: bitwise OR of their 32-bit two's-complement
 *   representations (`a | b`), the result read back as int32;
 * - `reverse`: logical OR.
 *
 * This is exactly the bytewise OR of the encoded states, which is what MAMEHub does with its
 * serialized states. Zero is the identity, so the zeros a client sends for another player's
 * devices leave that player's values intact; the merge is commutative, associative and
 * idempotent, so the result does not depend on the order of clients. Two clients driving the same
 * shared analog device get the OR of their values, not their sum (as in MAMEHub). With no
 * states, `out` is zeroed. Returns `out`.
 */
export function mergeMameInputStates(
  states: readonly (readonly MamePortState[])[],
  out: MameInputState,
): MameInputState {
  for (const s of states) {
    if (!sameShape(s, out)) throw new MameInputShapeError('input states of different shapes cannot be merged');
  }
  for (let i = 0; i < out.length; i++) {
    const port = out[i]!;
    let defaultMask = 0;
    let currentMask = 0;
    for (const s of states) {
      defaultMask |= s[i]!.defaultMask;
      currentMask |= s[i]!.currentMask;
    }
    port.defaultMask = defaultMask >>> 0;
    port.currentMask = currentMask >>> 0;
    for (let j = 0; j < port.analogs.length; j++) {
      let delta = 0;
      let previous = 0;
      let sensitivity = 0;
      let reverse = false;
      for (const s of states) {
        const a = s[i]!.analogs[j]!;
        delta |= a.accumulatedDelta;
        previous |= a.previousValue;
        sensitivity |= a.sensitivity;
        reverse ||= a.reverse;
      }
      const o = port.analogs[j]!;
      o.accumulatedDelta = delta;
      o.previousValue = previous;
      o.sensitivity = sensitivity;
      o.reverse = reverse;
    }
  }
  return out;
}
