import type { RetroArchHostHeader, RetroArchMessage, RetroArchSyncMessage } from '@netplay/protocol';
// RetroArchClient is imported for the TSDoc links only (`{@link RetroArchClient}` resolves in scope).
import type { RetroArchClient } from './client.js';
import type { RetroArchCoreInfo } from './client-options.js';
import type { RetroArchError } from './errors.js';

/** The host's INFO, header and SYNC, once the handshake is complete. */
export interface RetroArchSessionInfo {
  /** The host's connection header: protocol version chosen, password salt, platform magic, compression. */
  readonly header: RetroArchHostHeader;
  /** The host's nick, from its NICK. */
  readonly hostNick: string;
  /** The host's core and content, from its INFO. */
  readonly hostInfo: RetroArchCoreInfo;
  /** The host's SYNC: start frame, our client number and (possibly changed) nick, devices, SRAM. */
  readonly sync: RetroArchSyncMessage;
}

/** An INPUT from the host (reused object: valid during the callback only). */
export interface RetroArchInputEvent {
  /** `'input'`: one client's input for one frame arrived (INPUT). */
  type: 'input';
  /** The frame the input is for, in the host's frame numbering. */
  frame: number;
  /** Client number (low 16 bits of the client word). */
  client: number;
  /** The input words (a view into a reused buffer). */
  words: Uint32Array;
}

/** A NOINPUT from the host (reused object: valid during the callback only). */
export interface RetroArchNoInputEvent {
  /** `'noInput'`: the host reached a frame without input from anyone else (NOINPUT). */
  type: 'noInput';
  /** The frame the host has reached. */
  frame: number;
}

/** A CRC from the host (reused object: valid during the callback only). */
export interface RetroArchCrcEvent {
  /** `'crc'`: the host's state checksum for a frame (CRC). */
  type: 'crc';
  /** The frame whose state was checksummed (the state at its start). */
  frame: number;
  /** CRC-32 of the host's serialized state at `frame`, unsigned; a different one here means a desync. */
  crc: number;
}

/** Everything a {@link RetroArchClient} reports. */
export type RetroArchClientEvent =
  | {
      /** `'synced'`: the handshake is complete (SYNC received); the client spectates until it asks to play. */
      readonly type: 'synced';
      /** What the host sent during the handshake. */
      readonly session: RetroArchSessionInfo;
    }
  | {
      /** `'settings'`: the host announced a session setting (one field per message). */
      readonly type: 'settings';
      /** From SETTING_ALLOW_PAUSING: whether players may pause the session. */
      readonly allowPausing?: boolean;
      /** From SETTING_INPUT_LATENCY_FRAMES: the fewest frames of input latency the host wants. */
      readonly latencyMin?: number;
      /** From SETTING_INPUT_LATENCY_FRAMES: the most frames of input latency the host allows. */
      readonly latencyMax?: number;
    }
  | {
      /** `'savestate'`: the host sent its state (LOAD_SAVESTATE); load it to play on from `frame`. */
      readonly type: 'savestate';
      /** The frame the state belongs to (the state at that frame's start). */
      readonly frame: number;
      /** The uncompressed state, at most `maxSavestateBytes`; ours to keep. */
      readonly state: Uint8Array;
    }
  | RetroArchInputEvent
  | RetroArchNoInputEvent
  | RetroArchCrcEvent
  | {
      /** `'mode'`: a connection (ours when `you`) started or stopped playing (MODE). */
      readonly type: 'mode';
      /** Whether the change is about this client. */
      readonly you: boolean;
      /** Whether that client now plays (else it spectates). */
      readonly playing: boolean;
      /** That client's number, 0..31. */
      readonly client: number;
      /** The first frame the new mode applies to. */
      readonly frame: number;
      /** Bitmap of the input devices (ports 0..15) that client now drives; 0 when spectating. */
      readonly devices: number;
      /** That client's nick. */
      readonly nick: string;
    }
  | {
      /** `'modeRefused'`: the host refused our PLAY (MODE_REFUSED); we stay spectating. */
      readonly type: 'modeRefused';
      /** A `RetroArchModeRefusedReason` (0 other, 1 unprivileged, 2 no slots, 3 too fast, 4 not available), or another value as sent. */
      readonly reason: number;
    }
  | {
      /** `'pause'`: a player paused the session (PAUSE); frames stop until `resume`. */
      readonly type: 'pause';
      /** The nick of the player who paused. */
      readonly nick: string;
    }
  | {
      /** `'resume'`: the session runs again (RESUME). */
      readonly type: 'resume';
    }
  | {
      /** `'chat'`: a chat line relayed by the host (PLAYER_CHAT). */
      readonly type: 'chat';
      /** The sender's nick (empty if the host gave none). */
      readonly nick: string;
      /** The line, 1..95 UTF-8 bytes. */
      readonly text: string;
    }
  | {
      /** `'stall'`: the host asks us to wait (STALL) because we run ahead of it. */
      readonly type: 'stall';
      /** How many frames to wait (RetroArch clamps to 60). */
      readonly frames: number;
    }
  | {
      /** `'reset'`: the host reset the core (RESET). */
      readonly type: 'reset';
      /** The frame at which the reset takes effect. */
      readonly frame: number;
    }
  | {
      /** `'message'`: a command this client does not act on (an unknown one included), passed on as decoded. */
      readonly type: 'message';
      /** The decoded message. */
      readonly message: RetroArchMessage;
    }
  | {
      /** `'closed'`: the session ended; no event follows. */
      readonly type: 'closed';
      /** Why, when it failed (timeout, host full, wrong password, protocol error...); absent after a clean disconnect by either side. */
      readonly error?: RetroArchError;
    };
