// RetroArchClient is imported for the TSDoc links only (`{@link RetroArchClient}` resolves in scope).
import type { RetroArchClient } from './client.js';
import type { RetroArchClientEvent } from './client-events.js';

/** Core identity sent in our INFO. */
export interface RetroArchCoreInfo {
  /** CRC-32 of the loaded content (ROM), unsigned 32-bit; RetroArch warns when it differs from its own. */
  readonly contentCrc: number;
  /** The core's library name (at most 31 bytes on the wire, e.g. `Nestopia`); RetroArch refuses a peer whose core name differs (case-insensitively). */
  readonly coreName: string;
  /** The core's version string, byte for byte as the core reports it (at most 31 bytes on the wire); RetroArch only warns on a difference. */
  readonly coreVersion: string;
}

/** Options of a {@link RetroArchClient}. */
export interface RetroArchClientOptions {
  /** Our nick (at most 31 UTF-8 bytes). Default `netplay`. */
  readonly nick?: string;
  /** The password for a host that sends a salt. */
  readonly password?: string;
  /** What to answer the host's INFO with; default: the host's own INFO (same core and content). */
  readonly info?: RetroArchCoreInfo;
  /** Largest uncompressed savestate accepted, in bytes (checked before allocating). Default 16 MiB. */
  readonly maxSavestateBytes?: number;
  /** Milliseconds from {@link RetroArchClient.start} to SYNC before failing with `timeout`. Default 10 000. */
  readonly handshakeTimeoutMs?: number;
  /** Frames of our input sent ahead of the newest host frame while playing. Default 2. */
  readonly inputLead?: number;
  /**
   * Receives every event synchronously, during `receive` / `tick` / API calls. The per-frame
   * `input`, `noInput` and `crc` event objects are reused (nothing is allocated per frame): copy
   * what you keep.
   */
  readonly onEvent?: (event: RetroArchClientEvent) => void;
  /** Called when output becomes pending (so an I/O shell can schedule a flush). */
  readonly onOutput?: () => void;
  /**
   * Receives every whole frame the host sends after the handshake, as raw bytes (a view valid
   * during the call), before it is handled: for relaying a session (see `RetroArchHostConnection.relay`).
   */
  readonly onRawFrame?: (command: number, frame: Uint8Array) => void;
  /** Sees each INPUT of ours as it is queued: the frame and our words (a reused view). */
  readonly onInputSent?: (frame: number, words: Uint32Array) => void;
}
