/** What a decoder call did, to compare two decoders' answers (results, or DecodeError code and offset). */
import { DecodeError } from '../src/index.js';

/** What a call did: its result, or the code and offset of the DecodeError it threw. */
export type Outcome = { ok: unknown } | { code: string; offset: number };

/** Runs `fn` and returns its {@link Outcome}; anything thrown that is not a DecodeError is rethrown (the test fails). */
export function outcome(fn: () => unknown): Outcome {
  try {
    return { ok: fn() };
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    return { code: e.code, offset: e.offset };
  }
}

/** An outcome on a slice, as the same call `shift` bytes into a larger buffer must report it. */
export function shifted(o: Outcome, shift: number): Outcome {
  return 'ok' in o ? o : { code: o.code, offset: o.offset + shift };
}
