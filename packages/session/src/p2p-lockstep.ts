import { FRAME_ADVANCE_CHANNELS, FrameAdvancePeer, MESH_CHANNELS, MeshPeer } from '@netplay/lockstep';
import type { ChannelSpec } from '@netplay/transport';
import { SESSION_MESH_SYNC_FRAMES } from './host-mesh-history.js';
import type { FinalityScheduler } from './lockstep-finality.js';
import type { SessionMode } from './mode.js';

/** The two lockstep modes whose peers talk to each other: MAMEHub's mesh and FS-UAE's frame-advance. */
export type P2PLockstepMode = Extract<SessionMode, 'lockstep-p2p' | 'frame-advance'>;

/** Whether `mode` is one of the {@link P2PLockstepMode}s. */
export function isP2PLockstep(mode: SessionMode): mode is P2PLockstepMode {
  return mode === 'lockstep-p2p' || mode === 'frame-advance';
}

/** A P2P lockstep scheduler with the host's departure rule (`MeshPeer`, `FrameAdvancePeer`). */
export type P2PScheduler = FinalityScheduler & {
  /** Host: peer `id` is gone for good (nothing more will arrive from it); cut its stream for everyone. */
  removePeer(id: number, now: number): void;
};

/** What the session needs to know of a P2P lockstep mode's wire. */
export interface P2PLockstepShape {
  /** The scheduler's channels; a routed message names one by its index. */
  readonly channels: readonly ChannelSpec[];
  /**
   * Channels on which the scheduler sends the same bytes to every peer (mesh: `input`, `input-u`;
   * frame-advance: `sched`). A client sends them once, to the host, which hands them to its own
   * scheduler and forwards them, in the order received, to every other player.
   */
  readonly broadcast: ReadonlySet<string>;
}

const MESH_SHAPE: P2PLockstepShape = {
  channels: MESH_CHANNELS,
  broadcast: new Set(['input', 'input-u']),
};
const FRAME_ADVANCE_SHAPE: P2PLockstepShape = { channels: FRAME_ADVANCE_CHANNELS, broadcast: new Set(['sched']) };

/** The wire shape of `mode`. */
export function p2pShape(mode: P2PLockstepMode): P2PLockstepShape {
  return mode === 'lockstep-p2p' ? MESH_SHAPE : FRAME_ADVANCE_SHAPE;
}

/** Options of {@link createP2PScheduler}. */
export interface P2PSchedulerOptions {
  /** This peer's slot (its peer id and port); the host is slot 0. */
  readonly slot: number;
  /** Every player's slot, this one's included. */
  readonly slots: readonly number[];
  /** Ports of the core (player slots of the session). */
  readonly ports: number;
  /** Input bytes per port. */
  readonly inputBytes: number;
  /** Frame duration in ms. */
  readonly frameMs: number;
  /** When frame 0 is due on this peer's clock. */
  readonly startMs: number;
  /** Frame-advance: seed of the events' random order keys. */
  readonly seed: number;
  /** Extra delay added to the latency estimate, in ms (the session's input delay × frame duration). */
  readonly extraDelayMs: number;
  /** This player enters a running game (it asks the host to admit it; mesh: into port `slot`). */
  readonly candidate?: boolean;
}

/**
 * The scheduler of a P2P lockstep mode for one player of a session: peer ids are player slots and
 * the host (slot 0) is the mesh's first member and frame-advance's admitting host.
 * @throws LockstepError for shapes the scheduler cannot run (e.g. mesh inputs over 4 bytes).
 */
export function createP2PScheduler(mode: P2PLockstepMode, o: P2PSchedulerOptions): P2PScheduler {
  const others = o.slots.filter((s) => s !== o.slot);
  if (mode === 'lockstep-p2p') {
    const candidate = o.candidate === true;
    // A candidate asks the host (slot 0) for its own slot's port (a rejoin: a successor under its id).
    const members = candidate
      ? [{ id: 0, port: 0 }]
      : [...o.slots].sort((a, b) => a - b).map((s) => ({ id: s, port: s }));
    let mesh: MeshPeer | undefined;
    mesh = new MeshPeer({
      id: o.slot,
      members,
      ...(candidate ? { candidate, port: o.slot } : {}),
      ports: o.ports,
      inputBytes: o.inputBytes,
      frameMs: o.frameMs,
      startMs: o.startMs,
      extraDelayMs: o.extraDelayMs,
      syncIntervalFrames: SESSION_MESH_SYNC_FRAMES,
      // Bare unreliable copies: the relay's one unreliable channel drops other origins' messages
      // as stale under jitter, and bundles slowed the star (CI seeds -765156070, 412431886).
      unreliableBundles: false,
      // The reachability vote: the host's relay reaches every player, so every member says yes.
      onAction: (a) => {
        if (a.type === 'connect') mesh?.reportConnect(a.peer, true);
      },
    });
    return mesh;
  }
  return new FrameAdvancePeer({
    id: o.slot,
    port: o.slot,
    peers: others,
    ports: o.ports,
    inputBytes: o.inputBytes,
    frameMs: o.frameMs,
    startMs: o.startMs,
    seed: o.seed,
    extraDelayMs: o.extraDelayMs,
    host: 0,
    ...(o.candidate === true ? { candidate: true } : {}),
  });
}
