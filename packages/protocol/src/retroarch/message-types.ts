/**
 * The RetroArch protocol 6 messages as values: one interface per command (or group of commands
 * without a payload) and the union {@link RetroArchMessage}, discriminated by `type`.
 */

/** ACK, NAK, DISCONNECT, SPECTATE, REQUEST_SAVESTATE, RESUME, PING_REQUEST, PING_RESPONSE: no payload. */
export interface RetroArchEmptyMessage {
  /**
   * Which empty command: `ack` 0x00, `nak` 0x01 (the sender drops the connection), `disconnect` 0x02, `spectate` 0x24,
   * `requestSavestate` 0x41, `resume` 0x44, `pingRequest` 0x1100, `pingResponse` 0x1101. The payload length is 0.
   */
  readonly type:
    | 'ack'
    | 'nak'
    | 'disconnect'
    | 'spectate'
    | 'requestSavestate'
    | 'resume'
    | 'pingRequest'
    | 'pingResponse';
}

/** INPUT: one frame of a client's input. */
export interface RetroArchInputMessage {
  /** Discriminant of INPUT, command 0x03. */
  readonly type: 'input';
  /** Payload offset 0, u32: the frame this input is for. */
  readonly frame: number;
  /** The client number word (RetroArch uses its low 16 bits; a host ignores the claimed value). */
  readonly client: number;
  /** Input words per device, in device order (joypad 1, mouse/lightgun 2, analog 3, keyboard 5). */
  readonly input: Uint32Array;
}

/** NOINPUT: the host passed `frame` without input of its own. */
export interface RetroArchNoInputMessage {
  /** Discriminant of NOINPUT, command 0x04 (host → clients). */
  readonly type: 'noInput';
  /** Payload offset 0, u32 (the whole 4-byte payload): the frame the host passed. */
  readonly frame: number;
}

/** NICK (char[32]). */
export interface RetroArchNickMessage {
  /** Discriminant of NICK, command 0x20 (client → host, then the host's own nick back). */
  readonly type: 'nick';
  /** The sender's nick: at most 31 UTF-8 bytes, sent NUL-padded to 32; decoding stops at the first NUL. */
  readonly nick: string;
}

/** PASSWORD: 64 lowercase hex digits, see `retroArchPasswordHash`. */
export interface RetroArchPasswordMessage {
  /** Discriminant of PASSWORD, command 0x21 (client → host, only when the host header's salt is not 0). */
  readonly type: 'password';
  /** The 64-byte payload: lowercase hex SHA-256 of the host's salt as `%08lX` followed by the password. */
  readonly hash: string;
}

/** INFO: content CRC, core name, core version. */
export interface RetroArchInfoMessage {
  /** Discriminant of INFO, command 0x22 (host → client, then the client's answer), a 68-byte payload. */
  readonly type: 'info';
  /** Payload offset 0, u32: CRC-32 of the loaded content; a mismatch only warns. */
  readonly contentCrc: number;
  /**
   * Payload offset 4, char[32]: the core's library name (e.g. "Nestopia"); the two ends must match case-insensitively.
   */
  readonly coreName: string;
  /** Payload offset 36, char[32]: the core's version string (e.g. "1.52.0 "); a mismatch only warns. */
  readonly coreVersion: string;
}

/** SYNC: the host's initial synchronisation of a new client. */
export interface RetroArchSyncMessage {
  /** Discriminant of SYNC, command 0x23 (host → a new client), 184 bytes plus the SRAM. */
  readonly type: 'sync';
  /** Payload offset 0, u32: the host's current frame, where the client starts. */
  readonly frame: number;
  /** Bit 31 of the second word. */
  readonly paused: boolean;
  /** The client number the host assigned (bits 0–30 of the second word). */
  readonly client: number;
  /** The device type plugged into each of the 16 ports. */
  readonly devices: readonly number[];
  /** Share mode of each of the 16 devices (u8). */
  readonly shareModes: readonly number[];
  /** For each of the 16 devices, the bitmap of clients using it. */
  readonly deviceClients: readonly number[];
  /** The nick the host assigned (possibly changed to be unique). */
  readonly nick: string;
  /** SRAM contents (a view into the decoded bytes). */
  readonly sram: Uint8Array;
}

/** PLAY: request to play. */
export interface RetroArchPlayMessage {
  /** Discriminant of PLAY, command 0x25 (client → host), a 4-byte payload. */
  readonly type: 'play';
  /** Bit 31: play as a slave. */
  readonly slave: boolean;
  /** Bits 16–23. */
  readonly shareMode: number;
  /** Bits 0–15: wanted devices; 0 = any. */
  readonly devices: number;
}

/** MODE: a connection's mode changed. */
export interface RetroArchModeMessage {
  /** Discriminant of MODE, command 0x26 (host → clients), a 60-byte payload. */
  readonly type: 'mode';
  /** Payload offset 0, u32: the frame from which the new mode applies. */
  readonly frame: number;
  /** Bit 31: the change is about the receiver. */
  readonly you: boolean;
  /** Bit 30. */
  readonly playing: boolean;
  /** Bit 29. */
  readonly slave: boolean;
  /** Bits 0–15. */
  readonly client: number;
  /** Device bitmap. */
  readonly devices: number;
  /** Share mode of each of the 16 devices (u8). */
  readonly shareModes: readonly number[];
  /** Payload offset 28, char[32]: the nick of the client whose mode changed. */
  readonly nick: string;
}

/** MODE_REFUSED; `reason` is a `RetroArchModeRefusedReason` (other values are kept as sent). */
export interface RetroArchModeRefusedMessage {
  /** Discriminant of MODE_REFUSED, command 0x27 (host → the client whose PLAY it refuses). */
  readonly type: 'modeRefused';
  /**
   * The 4-byte payload: 0 other, 1 unprivileged, 2 no free slot, 3 changing modes too fast, 4 the requested device is
   * not available.
   */
  readonly reason: number;
}

/** CRC of the serialized state at `frame`. */
export interface RetroArchCrcMessage {
  /** Discriminant of CRC, command 0x40 (host → clients every `netplay_check_frames` frames), an 8-byte payload. */
  readonly type: 'crc';
  /** Payload offset 0, u32: the frame whose serialized state was hashed. */
  readonly frame: number;
  /**
   * Payload offset 4, u32: CRC-32 of the core's serialized state at `frame`; a client whose own differs asks for a
   * savestate.
   */
  readonly crc: number;
}

/** LOAD_SAVESTATE. */
export interface RetroArchLoadSavestateMessage {
  /** Discriminant of LOAD_SAVESTATE, command 0x42 (host → clients, or in answer to REQUEST_SAVESTATE). */
  readonly type: 'loadSavestate';
  /** Payload offset 0, u32: the frame the savestate was taken at, from which the receiver continues. */
  readonly frame: number;
  /** Payload offset 4, u32: the serialized state's size in bytes once inflated. */
  readonly uncompressedSize: number;
  /** The (zlib-compressed when both ends advertised zlib) state, a view into the decoded bytes. */
  readonly data: Uint8Array;
}

/** PAUSE with the pausing player's nick. */
export interface RetroArchPauseMessage {
  /** Discriminant of PAUSE, command 0x43 (a peer paused; the host relays it), a 32-byte payload. */
  readonly type: 'pause';
  /** char[32]: the nick of the player who paused. */
  readonly nick: string;
}

/** STALL for `frames` frames (RetroArch clamps to 60). */
export interface RetroArchStallMessage {
  /** Discriminant of STALL, command 0x45 (host → a client running ahead), a 4-byte payload. */
  readonly type: 'stall';
  /** u32: how many frames the receiver should wait; RetroArch clamps it to 60. */
  readonly frames: number;
}

/** RESET at `frame`. */
export interface RetroArchResetMessage {
  /** Discriminant of RESET, command 0x46, a 4-byte payload. */
  readonly type: 'reset';
  /** u32: the frame at which the sender reset the core; every peer resets there too. */
  readonly frame: number;
}

/**
 * PLAYER_CHAT. From a client: only `text`. From the host: `nick` (char[32]) and `text`. The text
 * is 1..95 UTF-8 bytes with no NUL terminator on the wire.
 */
export interface RetroArchPlayerChatMessage {
  /** Discriminant of PLAYER_CHAT, command 0x1000. */
  readonly type: 'playerChat';
  /** Present exactly when the host sent (or will send) the message. */
  readonly nick?: string;
  /** The chat line: 1..95 UTF-8 bytes, after the nick when the host sent it, with no NUL on the wire. */
  readonly text: string;
}

/** SETTING_ALLOW_PAUSING. */
export interface RetroArchAllowPausingMessage {
  /** Discriminant of SETTING_ALLOW_PAUSING, command 0x2000 (host → client after SYNC), a 4-byte payload. */
  readonly type: 'settingAllowPausing';
  /** The u32 payload, 1 (true) or 0: whether the host lets clients pause the game. */
  readonly allowPausing: boolean;
}

/** SETTING_INPUT_LATENCY_FRAMES. */
export interface RetroArchInputLatencyMessage {
  /** Discriminant of SETTING_INPUT_LATENCY_FRAMES, command 0x2001 (host → client after SYNC), an 8-byte payload. */
  readonly type: 'settingInputLatencyFrames';
  /** Payload offset 0, i32: the host's minimum input latency, in frames. */
  readonly min: number;
  /** Payload offset 4, i32: the host's maximum input latency, in frames. */
  readonly max: number;
}

/**
 * A command this package does not know. It decodes to this value instead of failing so that a
 * session layer sees it and chooses: RetroArch 1.14 skips an unknown command's payload with a
 * warning and stays connected (observed against a live host), while a stricter peer may NAK.
 */
export interface RetroArchUnknownMessage {
  /** Discriminant of a command id this package does not know; such a value can only be encoded with an unknown id. */
  readonly type: 'unknown';
  /** The frame's command id (u32), one that is not in `RetroArchCommand`. */
  readonly command: number;
  /** The payload, a view into the decoded bytes. */
  readonly payload: Uint8Array;
}

/** Every RetroArch protocol 6 message, discriminated by `type`. */
export type RetroArchMessage =
  | RetroArchEmptyMessage
  | RetroArchInputMessage
  | RetroArchNoInputMessage
  | RetroArchNickMessage
  | RetroArchPasswordMessage
  | RetroArchInfoMessage
  | RetroArchSyncMessage
  | RetroArchPlayMessage
  | RetroArchModeMessage
  | RetroArchModeRefusedMessage
  | RetroArchCrcMessage
  | RetroArchLoadSavestateMessage
  | RetroArchPauseMessage
  | RetroArchStallMessage
  | RetroArchResetMessage
  | RetroArchPlayerChatMessage
  | RetroArchAllowPausingMessage
  | RetroArchInputLatencyMessage
  | RetroArchUnknownMessage;

/** The `type` of a known message. */
export type RetroArchMessageType = Exclude<RetroArchMessage['type'], 'unknown'>;
