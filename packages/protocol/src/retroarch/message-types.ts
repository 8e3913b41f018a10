/**
 * The RetroArch protocol 6 messages as values: one interface per command (or group of commands
 * without a payload) and the union {@link RetroArchMessage}, discriminated by `type`.
 */

/** ACK, NAK, DISCONNECT, SPECTATE, REQUEST_SAVESTATE, RESUME, PING_REQUEST, PING_RESPONSE: no payload. */
export interface RetroArchEmptyMessage {
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
  readonly type: 'input';
  readonly frame: number;
  /** The client number word (RetroArch uses its low 16 bits; a host ignores the claimed value). */
  readonly client: number;
  /** Input words per device, in device order (joypad 1, mouse/lightgun 2, analog 3, keyboard 5). */
  readonly input: Uint32Array;
}

/** NOINPUT: the host passed `frame` without input of its own. */
export interface RetroArchNoInputMessage {
  readonly type: 'noInput';
  readonly frame: number;
}

/** NICK (char[32]). */
export interface RetroArchNickMessage {
  readonly type: 'nick';
  readonly nick: string;
}

/** PASSWORD: 64 lowercase hex digits, see `retroArchPasswordHash`. */
export interface RetroArchPasswordMessage {
  readonly type: 'password';
  readonly hash: string;
}

/** INFO: content CRC, core name, core version. */
export interface RetroArchInfoMessage {
  readonly type: 'info';
  readonly contentCrc: number;
  readonly coreName: string;
  readonly coreVersion: string;
}

/** SYNC: the host's initial synchronisation of a new client. */
export interface RetroArchSyncMessage {
  readonly type: 'sync';
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
  readonly type: 'mode';
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
  readonly nick: string;
}

/** MODE_REFUSED; `reason` is a `RetroArchModeRefusedReason` (other values are kept as sent). */
export interface RetroArchModeRefusedMessage {
  readonly type: 'modeRefused';
  readonly reason: number;
}

/** CRC of the serialized state at `frame`. */
export interface RetroArchCrcMessage {
  readonly type: 'crc';
  readonly frame: number;
  readonly crc: number;
}

/** LOAD_SAVESTATE. */
export interface RetroArchLoadSavestateMessage {
  readonly type: 'loadSavestate';
  readonly frame: number;
  readonly uncompressedSize: number;
  /** The (zlib-compressed when both ends advertised zlib) state, a view into the decoded bytes. */
  readonly data: Uint8Array;
}

/** PAUSE with the pausing player's nick. */
export interface RetroArchPauseMessage {
  readonly type: 'pause';
  readonly nick: string;
}

/** STALL for `frames` frames (RetroArch clamps to 60). */
export interface RetroArchStallMessage {
  readonly type: 'stall';
  readonly frames: number;
}

/** RESET at `frame`. */
export interface RetroArchResetMessage {
  readonly type: 'reset';
  readonly frame: number;
}

/**
 * PLAYER_CHAT. From a client: only `text`. From the host: `nick` (char[32]) and `text`. The text
 * is 1..95 UTF-8 bytes with no NUL terminator on the wire.
 */
export interface RetroArchPlayerChatMessage {
  readonly type: 'playerChat';
  /** Present exactly when the host sent (or will send) the message. */
  readonly nick?: string;
  readonly text: string;
}

/** SETTING_ALLOW_PAUSING. */
export interface RetroArchAllowPausingMessage {
  readonly type: 'settingAllowPausing';
  readonly allowPausing: boolean;
}

/** SETTING_INPUT_LATENCY_FRAMES. */
export interface RetroArchInputLatencyMessage {
  readonly type: 'settingInputLatencyFrames';
  readonly min: number;
  readonly max: number;
}

/**
 * A command this package does not know. It decodes to this value instead of failing so that a
 * session layer sees it and chooses: RetroArch 1.14 skips an unknown command's payload with a
 * warning and stays connected (observed against a live host), while a stricter peer may NAK.
 */
export interface RetroArchUnknownMessage {
  readonly type: 'unknown';
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
