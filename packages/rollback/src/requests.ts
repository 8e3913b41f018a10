/** Save the core's current state as the state of `frame` (the state before `frame` is simulated). */
export interface SaveRequest {
  /** Always `'save'`: tells this request from the other {@link SessionRequest} kinds. */
  readonly kind: 'save';
  /** The frame whose state this is; the session may later ask to load it (it keeps `ringFrames` of them). */
  readonly frame: number;
}

/**
 * Load the state of `frame`: the one saved for it, or `state` when given (a savestate sent by
 * the host to repair a desync, load a state or sync a joining spectator).
 */
export interface LoadRequest {
  /** Always `'load'`: tells this request from the other {@link SessionRequest} kinds. */
  readonly kind: 'load';
  /** The frame whose state to load; the next `advance` request simulates this frame. */
  readonly frame: number;
  /**
   * The savestate bytes to load (the host's, in the core's own format), or undefined to load the
   * state the application saved for `frame` on an earlier `save` request.
   */
  readonly state: Uint8Array | undefined;
}

/** Simulate `frame` with these inputs (the core's state then becomes that of `frame + 1`). */
export interface AdvanceRequest {
  /** Always `'advance'`: tells this request from the other {@link SessionRequest} kinds. */
  readonly kind: 'advance';
  /** The frame to simulate, from 0; a `save` of `frame + 1` follows. */
  readonly frame: number;
  /** Every player's input, concatenated (`players × inputBytes`). */
  readonly inputs: Uint8Array;
  /** Views of `inputs`, one per player. */
  readonly playerInputs: readonly Uint8Array[];
  /** One {@link InputStatus} per player. */
  readonly status: Uint8Array;
  /** True when this frame is simulated again after a rollback (skip audio/video if you like). */
  readonly resimulating: boolean;
}

/** One thing the session asks the application to do to its core, in order. */
export type SessionRequest = SaveRequest | LoadRequest | AdvanceRequest;

/** The pooled, mutable request object behind every kind. */
class PooledRequest {
  kind: 'save' | 'load' | 'advance' = 'save';
  frame = 0;
  state: Uint8Array | undefined = undefined;
  inputs: Uint8Array = EMPTY;
  playerInputs: readonly Uint8Array[] = [];
  status: Uint8Array = EMPTY;
  resimulating = false;
}
const EMPTY = new Uint8Array(0);

/**
 * A reusable list of requests: the array returned by a session step, valid until the next step.
 * Request objects are pooled, so steady-state steps allocate nothing.
 * @internal
 */
export class RequestList {
  private readonly pool: PooledRequest[] = [];
  /** The requests of the last step. */
  readonly items: SessionRequest[] = [];
  private n = 0;

  /** Starts a new step (entries are overwritten; the array keeps its capacity). */
  clear(): void {
    this.n = 0;
  }

  /** Ends the step: trims the array to the requests of this step and returns it. */
  done(): readonly SessionRequest[] {
    if (this.items.length !== this.n) this.items.length = this.n;
    return this.items;
  }

  private next(): PooledRequest {
    let r = this.pool[this.n];
    if (r === undefined) {
      r = new PooledRequest();
      this.pool.push(r);
    }
    this.items[this.n] = r as SessionRequest;
    this.n++;
    r.state = undefined;
    return r;
  }

  save(frame: number): void {
    const r = this.next();
    r.kind = 'save';
    r.frame = frame;
  }

  load(frame: number, state?: Uint8Array): void {
    const r = this.next();
    r.kind = 'load';
    r.frame = frame;
    r.state = state;
  }

  advance(
    frame: number,
    inputs: Uint8Array,
    playerInputs: readonly Uint8Array[],
    status: Uint8Array,
    resim: boolean,
  ): void {
    const r = this.next();
    r.kind = 'advance';
    r.frame = frame;
    r.inputs = inputs;
    r.playerInputs = playerInputs;
    r.status = status;
    r.resimulating = resim;
  }
}
