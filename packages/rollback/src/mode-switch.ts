import { DecodeError } from '@netplay/protocol';
import type { Emitter } from '@netplay/transport';
import { CONTROL_CHANNEL } from './channels.js';
import { RollbackError } from './errors.js';
import type { SessionEventMap } from './events.js';
import type { HostRole } from './host-role.js';
import type { InputExchange } from './input-exchange.js';
import { decodeByteFrameTail, encodeByteFrameTail, MessageType } from './messages.js';
import type { PeerSet } from './peer-set.js';
import type { Remote } from './remote.js';
import type { Timeline } from './timeline.js';

/**
 * Spectate ↔ play switches of peers that stay connected (MODE_REQUEST, MODE): a peer asks the
 * host, which decides the frame and tells every peer and spectator. A player stops right after the
 * inputs it already gave (nobody can hold an input of it past that frame, so the switch never
 * undoes a frame a peer took as final); a spectator plays from the host's next frame plus its
 * input delay.
 * @internal
 */
export class ModeSwitch {
  constructor(
    private readonly timeline: Timeline,
    private readonly peers: PeerSet,
    private readonly inputs: InputExchange,
    private readonly role: HostRole,
    private readonly emitter: Emitter<SessionEventMap>,
    private readonly localPlayer: number,
  ) {}

  /**
   * This peer asks to play (true) or to spectate (false); decided at once on the host.
   * @returns the frame from which this player stops playing (spectate), or undefined (play).
   */
  request(playing: boolean, delay: number): number | undefined {
    const q = this.timeline.queues[this.localPlayer]!;
    // To spectate, the player stops right after the inputs it already gave: nobody can hold an
    // input of it past that frame, so the switch never undoes a frame a peer took as final.
    const stopAt = q.lastFrame + 1;
    if (this.role.isHost) {
      this.switch(this.localPlayer, playing, stopAt, delay);
      return playing ? undefined : stopAt;
    }
    const hostPeer = this.role.hostPeer;
    const host = hostPeer === undefined ? undefined : this.peers.byPeer.get(hostPeer);
    if (host === undefined || !host.connected) throw new RollbackError('bad-state', 'no host to ask');
    if (!playing) this.timeline.disconnect(this.localPlayer, stopAt);
    this.peers.send(
      host,
      CONTROL_CHANNEL,
      encodeByteFrameTail(MessageType.ModeRequest, playing ? 1 : 0, stopAt, undefined),
    );
    return playing ? undefined : stopAt;
  }

  /** Host: a MODE_REQUEST from `r` (`delay`: the host's input delay). */
  onModeRequest(r: Remote, data: Uint8Array, delay: number): void {
    if (!this.role.isHost) throw new RollbackError('protocol', `${r.peer} asked a non-host to change its mode`);
    const m = decodeByteFrameTail(data, 'MODE_REQUEST');
    this.switch(r.player, m.byte === 1, m.frame, delay);
  }

  /** A MODE from the host: a player stops or starts playing at the frame it decided. */
  onMode(data: Uint8Array): void {
    const m = decodeByteFrameTail(data, 'MODE');
    const player = m.byte & 0x7f;
    const playing = (m.byte & 0x80) !== 0;
    const t = this.timeline;
    if (player >= t.players) throw new DecodeError('bad-value', 1, `player ${player}`);
    const q = t.queues[player]!;
    if (playing) {
      if (q.disconnectFrame === Number.POSITIVE_INFINITY) return;
      t.rejoin(player, m.frame);
    } else {
      // The player itself already stopped at that frame when it asked.
      if (q.disconnectFrame !== m.frame) {
        if (q.disconnectFrame !== Number.POSITIVE_INFINITY) return;
        if (m.tail.length > 0) this.inputs.take(player, m.tail);
        // Inputs still missing before that frame keep arriving from the player itself.
        t.disconnect(player, m.frame);
      }
    }
    this.emitter.emit('mode-changed', { player, frame: m.frame, playing });
  }

  /**
   * Host: `player` stops playing at the frame after its last input held, or starts again at the
   * host's next frame plus its input delay; every peer (and spectator) is told.
   */
  private switch(player: number, playing: boolean, stopAt: number, delay: number): void {
    const t = this.timeline;
    const q = t.queues[player]!;
    const isPlaying = q.disconnectFrame === Number.POSITIVE_INFINITY;
    if (isPlaying === playing) return;
    if (!playing) {
      // The player's own last frame, or later if the host already holds more of its inputs.
      const frame = Math.max(stopAt, q.lastFrame + 1);
      const tail = this.inputs.lastInputs(player, Math.min(frame, q.lastFrame + 1));
      this.role.broadcastDecision(encodeByteFrameTail(MessageType.Mode, player, frame, tail));
      t.disconnect(player, frame);
      this.emitter.emit('mode-changed', { player, frame, playing });
    } else {
      const frame = Math.max(t.currentFrame + delay + 1, q.disconnectFrame);
      this.role.broadcastDecision(encodeByteFrameTail(MessageType.Mode, player | 0x80, frame, undefined));
      t.rejoin(player, frame);
      this.emitter.emit('mode-changed', { player, frame, playing });
    }
  }
}
