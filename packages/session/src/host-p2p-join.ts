import type { LockstepRunner } from '@netplay/lockstep';
import { type HostP2P, hostRoute } from './host-lockstep.js';
import { MeshBroadcastHistory } from './host-mesh-history.js';
import { BroadcastHistory } from './host-p2p-history.js';
import type { Peer } from './host-peer.js';
import type { SlotMemory } from './host-rejoin.js';

/** frame-advance's welcome (`0x12` on `sched`, @netplay/lockstep README): the host admits the joiner. */
const FA_WELCOME = 0x12;

/** What {@link admitP2PMidGame} needs of the host. */
export interface P2PMidGameHost {
  readonly p2p: HostP2P;
  readonly runner: LockstepRunner;
  /** Every connection the host tracks. */
  readonly peers: Iterable<Peer>;
  readonly bySlot: Map<number, Peer>;
  readonly byNick: Map<string, Peer>;
  readonly slots: SlotMemory;
  /** Player slots, the host's included. */
  readonly players: number;
  /** The host's next frame (the earliest a joiner can enter at). */
  readonly frame: number;
  /** Closes the player `old` that `peer` replaces (the same nick from the same address, silent). */
  replaced(old: Peer): void;
  /** Sends SYNC to `peer` for `slot` (the host's next frame, the power-on state). */
  sync(peer: Peer, slot: number): void;
  /** The `peer-joined` event. */
  joined(e: { nick: string; slot: number; rejoined?: true }): void;
}

/**
 * frame-advance and lockstep-p2p: a player enters the running game (a newcomer in a free slot, or a player who
 * dropped back in its slot). The host gives it a slot (its old one if free: {@link SlotMemory}),
 * replacing its old connection if it is the same person reconnecting (`peer.replaces`), sends it
 * SYNC (the host's next frame and the power-on state: the joiner's `FrameAdvancePeer` is a
 * candidate) and opens its route. The scheduler does the rest at a frame every peer agrees on: the
 * candidate asks the host (`0x13`), the host puts `0x11 admit` in its `sched` stream (every member
 * reads it, relayed by the host in order before anything of the newcomer) and sends the candidate
 * `0x12 welcome` with the page delta of its state against power-on; every client already has a
 * route to every slot (a routed message to an empty slot is dropped by the host), so no route has
 * to appear at an agreed frame. The members' own streams reach the joiner through the host: from
 * the admission on as it relays them, and before that from its `BroadcastHistory` (replayed here).
 * lockstep-p2p the same way: the joiner's `MeshPeer` is a candidate asking for its slot's port
 * (under the slot's id: the successor of the player who left it, a new incarnation of the id); the
 * host's scheduler admits it once the departure is settled (its cut frame reached, a sync block
 * after it), every member's shell answers the reachability vote with yes (the relay reaches
 * everyone), the notice in the host's input stream tells every member, and at the acceptance the
 * host replays each member's inputs since the sync block (`MeshBroadcastHistory`).
 */
export function admitP2PMidGame(h: P2PMidGameHost, peer: Peer): void {
  const old = peer.replaces;
  peer.replaces = undefined;
  if (old !== undefined && old.stage === 'playing') h.replaced(old);
  const nick = peer.nick ?? '';
  h.byNick.set(nick, peer);
  const taken = new Set<number>([0]);
  for (const p of h.peers) if (p.stage === 'playing' && p.slot !== undefined) taken.add(p.slot);
  const slot = h.slots.pick(nick, taken, h.players);
  if (slot === undefined) throw new Error('admitP2PMidGame: no free slot (the room check lets no one in then)');
  peer.slot = slot;
  peer.stage = 'playing';
  h.bySlot.set(slot, peer);
  h.sync(peer, slot);
  const { history } = h.p2p;
  // frame-advance: what the members broadcast just before, for frames the joiner will run (see
  // BroadcastHistory). lockstep-p2p: at the acceptance, which names the sync frame.
  if (history instanceof BroadcastHistory) history.replay(peer.conn, slot, h.frame);
  // Until the scheduler welcomes it (frame-advance's `0x12` on `sched`, the mesh's acceptance `4`
  // on `join`), nothing of the host's scheduler reaches it: what it still sends the slot's previous
  // holder (a departure not settled yet) is not for the newcomer, nor are the rejections of the
  // mesh's candidate while that departure settles (a candidate gives up on the first; its hello
  // repeats every second until the host accepts it).
  const route = hostRoute(h.p2p.shape, slot, peer.conn, (channel, data) =>
    history instanceof MeshBroadcastHistory
      ? history.acceptance(peer.conn, slot, channel, data)
      : channel === 'sched' && data[0] === FA_WELCOME,
  );
  h.p2p.routes.set(slot, route);
  h.runner.addPeer(slot, route);
  const rejoined = h.slots.slotOf(nick) === slot;
  h.joined({ nick, slot, ...(rejoined ? { rejoined } : {}) });
}
