import { MESH_CHANNELS, MeshRelayHistory } from '@netplay/lockstep';
import { type Connection, TransportError } from '@netplay/transport';
import { RELAY_CONTROL_CHANNEL } from './channels.js';
import { RelayFramer } from './relay.js';

/** The mesh's `input` channel index on the relay (its reliable copy of every input packet). */
const INPUT_INDEX = MESH_CHANNELS.findIndex((c) => c.name === 'input');

/**
 * Packets kept per player for a joiner (a packet a frame: over 8 s at 60 Hz, several times the
 * session's sync interval, {@link SESSION_MESH_SYNC_FRAMES}).
 */
export const SESSION_MESH_HISTORY = 512;

/**
 * lockstep-p2p at the host: each player's recent `input` broadcasts (@netplay/lockstep's
 * `MeshRelayHistory`), replayed to a player entering the game at its acceptance. A `MeshPeer`
 * member sends a joiner its own inputs since the sync block as per-peer messages on `input`, a
 * broadcast channel, which a client's routes send only once, to the host; so the host, when its
 * scheduler sends the candidate the acceptance (`4` on `join`, which names the sync frame),
 * replays each other member's stream from the last packet at or before that frame, after a base
 * (`3, u32 first id`), as relayed messages from that member, before the acceptance itself.
 */
export class MeshBroadcastHistory {
  private readonly history: MeshRelayHistory;
  private readonly framer = new RelayFramer();

  constructor(ports: number) {
    this.history = new MeshRelayHistory(ports, SESSION_MESH_HISTORY);
  }

  /** Player `slot` broadcast `payload` on `channel` (kept if it is an input packet on `input`). */
  record(slot: number, channel: string, _ci: number, payload: Uint8Array): void {
    this.history.record(slot, channel, payload);
  }

  /** Player `slot` left: its stream is forgotten (a successor in its slot starts a new one). */
  forget(slot: number): void {
    this.history.forget(slot);
  }

  /**
   * If `data` on `channel` is the host scheduler's acceptance of the candidate in `slot`: replays
   * the members' streams to it on `to` and returns true (the route may let the acceptance through).
   */
  acceptance(to: Connection, slot: number, channel: string, data: Uint8Array): boolean {
    const sync = MeshRelayHistory.acceptedSync(channel, data);
    if (sync === undefined) return false;
    this.history.replay(slot, sync, (from, _channel, payload) => {
      if (to.state === 'closed') return;
      try {
        to.send(RELAY_CONTROL_CHANNEL, this.framer.frameRouted(from, INPUT_INDEX, payload));
      } catch (e) {
        if (!(e instanceof TransportError)) throw e;
      }
    });
    return true;
  }
}

/** The session mesh's sync interval in frames (MAMEHub's default is 30 s: a joiner's history would not be kept that long). */
export const SESSION_MESH_SYNC_FRAMES = 100;
