/**
 * RetroArch netplay command ids (protocol 6, RetroArch 1.14), as sent in the first word of a frame.
 */
export enum RetroArchCommand {
  /** Acknowledgement (unused by RetroArch). Empty. */
  Ack = 0x0000,
  /** Negative acknowledgement: the sender drops the connection. Empty. */
  Nak = 0x0001,
  /** Graceful disconnect. Empty. */
  Disconnect = 0x0002,
  /** One frame of a client's input. */
  Input = 0x0003,
  /** The host passed a frame without input of its own. */
  NoInput = 0x0004,
  /** Nickname, char[32]. */
  Nick = 0x0020,
  /** Password hash, char[64]. */
  Password = 0x0021,
  /** Core and content info, 68 bytes. */
  Info = 0x0022,
  /** Initial synchronisation, 184 bytes plus SRAM. */
  Sync = 0x0023,
  /** Request to become a spectator. Empty. */
  Spectate = 0x0024,
  /** Request to play. */
  Play = 0x0025,
  /** A connection's mode changed, 60 bytes. */
  Mode = 0x0026,
  /** A PLAY request was refused. */
  ModeRefused = 0x0027,
  /** CRC-32 of the serialized state at a frame. */
  Crc = 0x0040,
  /** Ask the peer for a savestate. Empty. */
  RequestSavestate = 0x0041,
  /** A (zlib-compressed) savestate to load. */
  LoadSavestate = 0x0042,
  /** The sender paused; carries a nick. */
  Pause = 0x0043,
  /** The sender resumed. Empty. */
  Resume = 0x0044,
  /** Stall for a number of frames. */
  Stall = 0x0045,
  /** The core was reset at a frame. */
  Reset = 0x0046,
  /** A chat line (client→host: text; host→client: nick + text). */
  PlayerChat = 0x1000,
  /** Ping request. Empty. */
  PingRequest = 0x1100,
  /** Ping response. Empty. */
  PingResponse = 0x1101,
  /** Host setting: whether clients may pause. */
  SettingAllowPausing = 0x2000,
  /** Host setting: input latency frames (min, max). */
  SettingInputLatencyFrames = 0x2001,
}

/** Reasons carried by MODE_REFUSED. */
export enum RetroArchModeRefusedReason {
  /** Any other reason, or none given. */
  Other = 0,
  /** The client is not allowed to play (for instance it has not given the play password). */
  Unprivileged = 1,
  /** No player slot is free. */
  NoSlots = 2,
  /** The client changed modes too often; it may ask again later. */
  TooFast = 3,
  /** The device the client asked for in PLAY is taken or does not exist. */
  NotAvailable = 4,
}

/** Who sent a message: the two ends lay out a few payloads (PLAYER_CHAT) differently. */
export type RetroArchSender = 'client' | 'host';

/** Bit 0 of the compression word: zlib. */
export const RETROARCH_COMPRESSION_ZLIB = 1;
/** Highest protocol version this package speaks. */
export const RETROARCH_PROTOCOL_HIGH = 6;
/** Lowest protocol version RetroArch 1.14 accepts. */
export const RETROARCH_PROTOCOL_LOW = 5;
/** Default TCP port, also the UDP LAN discovery port. */
export const RETROARCH_DEFAULT_PORT = 55435;
/** Size of NUL-padded nick fields. */
export const RETROARCH_NICK_SIZE = 32;
/** Size of the PASSWORD payload (64 lowercase hex digits). */
export const RETROARCH_PASSWORD_HASH_SIZE = 64;
/** RetroArch's chat buffer; a chat text is 1..95 bytes (no NUL is sent). */
export const RETROARCH_CHAT_MAX_TEXT = 95;
/** Most frames a STALL asks for; RetroArch clamps larger requests to this. */
export const RETROARCH_MAX_STALL_FRAMES = 60;
/** Number of input devices (MAX_INPUT_DEVICES) in SYNC and MODE arrays. */
export const RETROARCH_MAX_DEVICES = 16;
