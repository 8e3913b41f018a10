import { SessionError } from './errors.js';

/**
 * Longest chat line in UTF-8 bytes, after sanitizing (RetroArch's chat is 256 bytes too, FCE
 * Ultra's 200 characters). A longer line from the API is a `bad-argument` error; on the wire it
 * does not decode, so a peer that sends one is disconnected with `protocol`.
 */
export const MAX_CHAT_BYTES = 256;

/** What a host command does, as the session's events and messages name it. */
export type SessionCommandKind = 'pause' | 'resume' | 'reset';

/** Wire bytes of {@link SessionCommandKind} (COMMAND and COMMAND_REQUEST). */
export const SESSION_COMMAND_KINDS: readonly SessionCommandKind[] = ['pause', 'resume', 'reset'];

// C0 and C1 controls, DEL, and the bidirectional embedding / override / isolate marks, which can
// make a line display as something it does not say.
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

// A high surrogate without a low one after it, or a low one without a high one before it.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const utf8 = new TextEncoder();

/**
 * A chat line as every peer shows it: control characters (C0, DEL, C1 and the bidi controls
 * U+202A–202E, U+2066–2069: newlines and tabs included) are removed, and surrounding white space
 * trimmed. Lone surrogates become U+FFFD (the UTF-8 encoder's rule), so the result is valid UTF-8.
 */
export function sanitizeChat(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD').replace(CONTROL, '').trim();
}

/**
 * Sanitizes `text` and checks it for sending.
 * @throws SessionError `bad-argument` when nothing is left or the line is over {@link MAX_CHAT_BYTES}.
 */
export function checkChat(text: string): string {
  if (typeof text !== 'string') throw new SessionError('bad-argument', 'chat text must be a string');
  const clean = sanitizeChat(text);
  const n = utf8.encode(clean).length;
  if (n === 0) throw new SessionError('bad-argument', 'chat text is empty (after removing control characters)');
  if (n > MAX_CHAT_BYTES)
    throw new SessionError('bad-argument', `chat text is ${n} UTF-8 bytes; at most ${MAX_CHAT_BYTES}`);
  return clean;
}

/**
 * The lockstep modes' command byte: one byte after the host's ports in the host's input, so the
 * schedulers agree on it like on any input, frame by frame. Bit 0: paused (the frame is scheduled,
 * inputs keep flowing, but no core advances); bits 1–7: how many resets the host made (mod 128): a
 * frame whose count differs from the previous frame's starts from the power-on state on every peer.
 */
export class CommandWord {
  private pausedFlag = false;
  private resets = 0;

  /** The byte the host puts in its input now. */
  get byte(): number {
    return ((this.resets & 0x7f) << 1) | (this.pausedFlag ? 1 : 0);
  }

  /** True while the host asks for a pause. */
  get paused(): boolean {
    return this.pausedFlag;
  }

  /** Asks every peer to pause (true) or resume (false) from the frame this input lands on. */
  setPaused(paused: boolean): void {
    this.pausedFlag = paused;
  }

  /** Asks every peer to reset (load the power-on state) at the frame this input lands on. */
  reset(): void {
    this.resets = (this.resets + 1) & 0x7f;
  }
}
