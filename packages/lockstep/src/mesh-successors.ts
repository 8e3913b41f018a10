import { nextIncarnation } from './mesh-join.js';
import type { Remote } from './mesh-remote.js';
import { readU32BE } from './pool.js';

/**
 * Successors of departed mesh peers: a peer admitted under the id of one that left (a player
 * rejoining its slot). A member still short of the departed peer's cut frame when the host's join
 * notice arrives keeps both: the departed peer's stream (ids below the successor's `firstId`)
 * until the cut, the successor's (ids from `firstId` on: a new incarnation, see
 * `INCARNATION_IDS`) from then on; late copies of the departed peer's packets never count as the
 * successor's. The host also remembers each departed id's last incarnation, to number the next.
 */
export class MeshSuccessors {
  private readonly pending = new Map<number, Remote>();
  private readonly retired = new Map<number, number>();

  /** Successors waiting for their predecessor's cut. */
  get size(): number {
    return this.pending.size;
  }

  /** Keeps `r`, the successor of the peer still listed under its id. */
  add(r: Remote): void {
    this.pending.set(r.id, r);
  }

  /** The successor of `id`, if one waits. */
  get(id: number): Remote | undefined {
    return this.pending.get(id);
  }

  /**
   * The remote an input message (`data`, kind byte then u32 id) from `from` belongs to: the
   * successor when its id is at or past the successor's first, else `current`.
   */
  pick(from: number, data: Uint8Array, current: Remote | undefined): Remote | undefined {
    if (this.pending.size === 0 || data.length < 5) return current;
    const s = this.pending.get(from);
    return s !== undefined && readU32BE(data, 1) >= s.firstId ? s : current;
  }

  /** The departed `r` is dropped (its cut reached): returns its successor, if one waits, to take its place. */
  retire(r: Remote): Remote | undefined {
    this.retired.set(r.id, r.firstId);
    const s = this.pending.get(r.id);
    this.pending.delete(r.id);
    return s;
  }

  /** The first packet id a candidate with id `id` gets: 0 for an id never seen, else the next incarnation (`undefined`: none left). */
  firstIdFor(id: number): number | undefined {
    const last = this.retired.get(id);
    return last === undefined ? 0 : nextIncarnation(last);
  }
}
