import { type ClientServerServer, type LockstepRunner, WatcherStream } from '@netplay/lockstep';
import type { Core } from '@netplay/state';
import { TransportError } from '@netplay/transport';
import { SessionError } from './errors.js';
import type { Peer } from './host-peer.js';

/**
 * Scheduler peer ids of lockstep-cs spectators start here: above every player slot (a slot is a
 * u8, 255 meaning spectator), so a spectator's id never names a port.
 */
export const FIRST_SPECTATOR_ID = 0x1000;

/**
 * Spectators of the lockstep modes at the host. lockstep-cs: each is a watcher of the host's `ClientServerServer`
 * (@netplay/lockstep `addWatcher`): it gets the state at the start of the server's next frame (a
 * page delta against the power-on state, deflated, on `sync`) and every frame's data from there,
 * never affects the game (no port; its inputs, chat and commands are dropped by the server) and is
 * never waited for. A spectator admitted before the server runs waits and is added when it starts.
 * One that trails the server by more than `maxWatcherLagFrames` (its own progress reports) is
 * dropped by the server; {@link removed} names it so that the host refuses it with the reason.
 *
 * lockstep-p2p and frame-advance: the host runs every frame with every player's input, and its
 * frames are final for everyone, so it streams them (@netplay/lockstep `WatcherStream`, the same
 * wire): each spectator gets `sync` (the state at the start of the host's next frame, as a page
 * delta against the power-on state) and then every frame the host runs, straight on its own
 * connection (no relay); its progress reports come back on `control`, and one that falls behind is
 * refused with the reason.
 */
export class LockstepSpectators {
  private nextId = FIRST_SPECTATOR_ID;
  private readonly ids = new Map<Peer, number>();
  private readonly byId = new Map<number, Peer>();
  private server: ClientServerServer | undefined;
  private runner: LockstepRunner | undefined;
  /** lockstep-p2p and frame-advance: the host's frames, streamed. */
  private stream: { readonly frames: WatcherStream; readonly core: Core; readonly runner: LockstepRunner } | undefined;

  /** `refuse` closes a spectator that fell behind (P2P modes; lockstep-cs goes through {@link removed}). */
  constructor(private readonly refuse: (peer: Peer, error: SessionError) => void) {}

  /** The server started: every spectator admitted so far becomes a watcher. */
  attach(server: ClientServerServer, runner: LockstepRunner): void {
    this.server = server;
    this.runner = runner;
    for (const [peer, id] of this.ids) this.watch(peer, id);
  }

  /**
   * lockstep-p2p and frame-advance: the host's runner started on `core` (its frames are streamed
   * with {@link frameRan}); `initialState` is the power-on state SYNC gave the spectators. Every
   * spectator admitted so far starts at the runner's next frame.
   */
  attachStream(core: Core, runner: LockstepRunner, initialState: Uint8Array, ports: number, inputBytes: number): void {
    this.stream = { frames: new WatcherStream({ ports, inputBytes, initialState }), core, runner };
    for (const id of this.ids.values()) this.streamTo(id);
  }

  /** Admits `peer` (the host has sent it SYNC with the power-on state). */
  admit(peer: Peer): void {
    const id = this.nextId++;
    this.ids.set(peer, id);
    this.byId.set(id, peer);
    if (this.server !== undefined) this.watch(peer, id);
    if (this.stream !== undefined) this.streamTo(id);
  }

  /** P2P modes: frame `frame` ran on the host with `inputs` (the scheduler's, every port's): to every spectator. */
  frameRan(frame: number, inputs: Uint8Array): void {
    const st = this.stream;
    if (st === undefined) return;
    const dropped = st.frames.frameRan(frame, inputs);
    this.flush();
    for (const id of dropped) {
      const peer = this.byId.get(id);
      if (peer === undefined) continue;
      this.forget(peer);
      this.refuse(peer, behind(frame));
    }
  }

  /** A game message from spectator `peer`: true if it was handled here (P2P modes: its progress; anything else is dropped). */
  message(peer: Peer, channel: string, data: Uint8Array): boolean {
    const id = this.ids.get(peer);
    if (this.stream === undefined || id === undefined) return false;
    this.stream.frames.receive(id, channel, data);
    return true;
  }

  /** A spectator left: the server stops streaming to it. */
  forget(peer: Peer): void {
    const id = this.ids.get(peer);
    if (id === undefined) return;
    this.ids.delete(peer);
    this.byId.delete(id);
    this.server?.removeWatcher(id);
    this.runner?.removePeer(id);
    this.stream?.frames.removeWatcher(id);
  }

  /**
   * The server removed scheduler peer `id` at `frame`: if it is a spectator (it fell behind), the
   * spectator and the refusal the host closes it with; undefined for a player.
   */
  removed(id: number, frame: number): { peer: Peer; error: SessionError } | undefined {
    const peer = this.byId.get(id);
    if (peer === undefined) return undefined;
    this.forget(peer);
    return { peer, error: behind(frame) };
  }

  /** Starts streaming to spectator `id` from the host's next frame (its core holds the state at its start). */
  private streamTo(id: number): void {
    const st = this.stream!;
    const state = new Uint8Array(st.core.stateBytes);
    const n = st.core.saveInto(state);
    st.frames.addWatcher(id, st.runner.schedulerRef.nextFrame, state.subarray(0, n));
    this.flush();
  }

  /** Sends the stream's messages, each on its spectator's own connection. */
  private flush(): void {
    const out = this.stream?.frames.outbox;
    if (out === undefined) return;
    for (const e of out) {
      const conn = this.byId.get(e.to)?.conn;
      if (conn === undefined || conn.state === 'closed') continue;
      try {
        conn.send(e.channel, e.data);
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
      }
    }
    while (out.length > 0) out.pop();
  }

  private watch(peer: Peer, id: number): void {
    this.server?.addWatcher(id);
    this.runner?.addPeer(id, peer.conn);
  }
}

/** The refusal of a spectator dropped for falling behind, from `frame` on. */
function behind(frame: number): SessionError {
  return new SessionError(
    'removed',
    `removed at frame ${frame}: this spectator fell too far behind the game (its frames queued at the host reached the limit)`,
  );
}
