import type {
  RtcConfiguration,
  RtcDataChannelInit,
  RtcDataChannelLike,
  RtcPeerConnectionConstructor,
  RtcPeerConnectionLike,
} from '../src/index.js';

/** A switch shared by every data channel made through one {@link cuttableRtc} constructor. */
export interface LinkSwitch {
  /** While true, sends are swallowed and received messages are dropped (a pulled cable). */
  cut: boolean;
}

/**
 * Wraps a data channel: forwards everything, except that while `link.cut` nothing is sent or
 * delivered. Used only for the conformance suite's `cut()` (everything is dropped, so it does not
 * matter that this sits above SCTP's own reliability).
 */
class CuttableChannel implements RtcDataChannelLike {
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { readonly data: unknown }) => void) | null = null;

  constructor(
    private readonly inner: RtcDataChannelLike,
    private readonly link: LinkSwitch,
  ) {
    inner.onopen = (ev) => this.onopen?.(ev);
    inner.onclose = (ev) => this.onclose?.(ev);
    inner.onerror = (ev) => this.onerror?.(ev);
    inner.onmessage = (ev) => {
      if (!this.link.cut) this.onmessage?.(ev);
    };
  }

  get readyState(): string {
    return this.inner.readyState;
  }
  get bufferedAmount(): number {
    return this.inner.bufferedAmount;
  }
  get binaryType(): string {
    return this.inner.binaryType;
  }
  set binaryType(value: string) {
    this.inner.binaryType = value;
  }
  send(data: Uint8Array): void {
    if (!this.link.cut) this.inner.send(data);
  }
  close(): void {
    this.inner.close();
  }
}

/** An `RTCPeerConnection` constructor whose data channels obey `link`. */
export function cuttableRtc(Base: RtcPeerConnectionConstructor, link: LinkSwitch): RtcPeerConnectionConstructor {
  return class {
    constructor(config: RtcConfiguration) {
      const pc = new Base(config);
      const create = pc.createDataChannel.bind(pc);
      pc.createDataChannel = (label: string, init: RtcDataChannelInit) =>
        new CuttableChannel(create(label, init), link);
      // biome-ignore lint/correctness/noConstructorReturn: a wrapped instance stands in for the real one
      return pc;
    }
  } as unknown as RtcPeerConnectionConstructor;
}

export type { RtcPeerConnectionLike };

/**
 * Wraps a data channel whose `open` event the application sees `delayMs` late (readyState stays
 * `connecting` until then), as a browser or node-datachannel may dispatch one channel's open
 * after messages of another channel of the same connection (CI: a session HELLO queued before
 * open went out on a channel not yet flagged open, and was lost).
 */
class LateOpenChannel implements RtcDataChannelLike {
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { readonly data: unknown }) => void) | null = null;
  private opened = false;

  constructor(
    private readonly inner: RtcDataChannelLike,
    delayMs: number,
  ) {
    inner.onopen = (ev) => {
      setTimeout(() => {
        this.opened = true;
        this.onopen?.(ev);
      }, delayMs);
    };
    inner.onclose = (ev) => this.onclose?.(ev);
    inner.onerror = (ev) => this.onerror?.(ev);
    inner.onmessage = (ev) => this.onmessage?.(ev);
  }

  get readyState(): string {
    const s = this.inner.readyState;
    return s === 'open' && !this.opened ? 'connecting' : s;
  }
  get bufferedAmount(): number {
    return this.inner.bufferedAmount;
  }
  get binaryType(): string {
    return this.inner.binaryType;
  }
  set binaryType(value: string) {
    this.inner.binaryType = value;
  }
  send(data: Uint8Array): void {
    this.inner.send(data);
  }
  close(): void {
    this.inner.close();
  }
}

/** An `RTCPeerConnection` constructor whose data channels labelled by `late` report open `delayMs` late. */
export function lateOpenRtc(
  Base: RtcPeerConnectionConstructor,
  late: (label: string) => boolean,
  delayMs: number,
): RtcPeerConnectionConstructor {
  return class {
    constructor(config: RtcConfiguration) {
      const pc = new Base(config);
      const create = pc.createDataChannel.bind(pc);
      pc.createDataChannel = (label: string, init: RtcDataChannelInit) => {
        const dc = create(label, init);
        return late(label) ? new LateOpenChannel(dc, delayMs) : dc;
      };
      // biome-ignore lint/correctness/noConstructorReturn: a wrapped instance stands in for the real one
      return pc;
    }
  } as unknown as RtcPeerConnectionConstructor;
}
