import {
  RETROARCH_COMPRESSION_ZLIB,
  RetroArchHeaderMagic,
  type RetroArchHostHeader,
  type RetroArchMessage,
  type RetroArchSyncMessage,
  retroArchPasswordHash,
} from '@netplay/protocol';
import type { RetroArchSessionInfo } from './client-events.js';
import type { RetroArchClientOptions, RetroArchCoreInfo } from './client-options.js';
import { RetroArchError } from './errors.js';

/**
 * The handshake stages of a `RetroArchClient`, after our header and NICK: the host's header
 * (PASSWORD sent when it has a salt), the host's NICK, its INFO (answered with our INFO), then
 * SYNC, which completes it. A stage that fails throws the `RetroArchError` that closes the session.
 */
export class RetroArchClientHandshake {
  private _header: RetroArchHostHeader | undefined;
  private hostNick: string | undefined;
  private hostInfo: RetroArchCoreInfo | undefined;
  private passwordSent = false;
  private _zlib = false;

  /** `send` queues a message for the host (PASSWORD, our INFO) and flushes. */
  constructor(
    private readonly options: Pick<RetroArchClientOptions, 'password' | 'info'>,
    private readonly send: (message: RetroArchMessage) => void,
  ) {}

  /** Whether the host's connection header has arrived (and was accepted). */
  get headerReceived(): boolean {
    return this._header !== undefined;
  }

  /** Whether both ends advertised zlib (savestates are then deflated). */
  get zlib(): boolean {
    return this._zlib;
  }

  /** Our PASSWORD went out and the host has not answered with its INFO yet: a NAK or hang-up now refuses it. */
  get passwordUnanswered(): boolean {
    return this.passwordSent && this.hostInfo === undefined;
  }

  /** Stage 1: the host's connection header. Throws `host-full`, `host-denied`, `bad-header` or `password-required`. */
  onHeader(h: RetroArchHostHeader): void {
    if (h.magic === RetroArchHeaderMagic.Full) throw new RetroArchError('host-full', 'the host is full');
    if (h.magic === RetroArchHeaderMagic.Deny) throw new RetroArchError('host-denied', 'the host denies us');
    if (h.magic !== RetroArchHeaderMagic.Ranp || h.protocol < 5 || h.protocol > 6) {
      throw new RetroArchError('bad-header', `host header magic ${h.magic} protocol ${h.protocol}`);
    }
    this._header = h;
    this._zlib = (h.compression & RETROARCH_COMPRESSION_ZLIB) !== 0;
    if (h.salt !== 0) {
      if (this.options.password === undefined) {
        throw new RetroArchError('password-required', 'the host asks for a password');
      }
      this.passwordSent = true;
      this.send({ type: 'password', hash: retroArchPasswordHash(h.salt, this.options.password) });
    }
  }

  /**
   * Stages 2–4: a message from the host before SYNC (NICK, INFO, SYNC). Returns the session once
   * SYNC completes the handshake, else `undefined`; throws `protocol` on a message out of place.
   */
  onMessage(m: RetroArchMessage): RetroArchSessionInfo | undefined {
    switch (m.type) {
      case 'nick':
        this.hostNick = m.nick;
        return undefined;
      case 'info': {
        this.hostInfo = { contentCrc: m.contentCrc, coreName: m.coreName, coreVersion: m.coreVersion };
        const ours = this.options.info ?? this.hostInfo;
        this.send({ type: 'info', ...ours });
        return undefined;
      }
      case 'sync': {
        if (this.hostInfo === undefined || this._header === undefined) {
          throw new RetroArchError('protocol', 'SYNC before INFO');
        }
        const sync: RetroArchSyncMessage = { ...m, sram: m.sram.slice() };
        return { header: this._header, hostNick: this.hostNick ?? '', hostInfo: this.hostInfo, sync };
      }
      default:
        throw new RetroArchError('protocol', `unexpected ${m.type} during the handshake`);
    }
  }
}
