import { DecodeError } from '@netplay/protocol';
import type { Emitter } from '@netplay/transport';
import { CONTROL_CHANNEL } from './channels.js';
import { isDecisionType } from './decision-log.js';
import type { DropReports } from './drop-reports.js';
import { RollbackError } from './errors.js';
import type { SessionEventMap } from './events.js';
import type { HostCommands } from './host-commands.js';
import type { HostRole } from './host-role.js';
import type { InputExchange } from './input-exchange.js';
import { CHECKSUM_V1, INPUT_V1, versionError } from './input-message.js';
import type { Liveness } from './liveness.js';
import { decodeByteFrameTail, MessageType, need } from './messages.js';
import type { ModeSwitch } from './mode-switch.js';
import type { PeerSet } from './peer-set.js';
import type { PlayerEntries } from './player-entries.js';
import type { PlayerLeaves } from './player-leaves.js';
import type { Remote } from './remote.js';
import type { SpectatorServer } from './spectator-server.js';

/** The parts of a {@link P2PSession} that received messages go to. */
export interface DispatchTargets {
  readonly peers: PeerSet;
  readonly liveness: Liveness;
  readonly spectators: SpectatorServer;
  readonly role: HostRole;
  readonly commands: HostCommands;
  readonly inputs: InputExchange;
  readonly leaves: PlayerLeaves;
  readonly drops: DropReports;
  readonly modes: ModeSwitch;
  readonly entries: PlayerEntries;
  readonly emitter: Emitter<SessionEventMap>;
  readonly localPlayer: number;
  readonly interruptMs: number;
  readonly now: () => number;
  /** The input delay now (a MODE_REQUEST to play is decided with it). */
  readonly delay: () => number;
  /** The session's `disconnectPeer` (DROPPED). */
  readonly disconnectPeer: (peer: string) => void;
  /** An END of the end agreement (finality.ts). */
  readonly onEnd: (r: Remote, data: Uint8Array) => void;
}

/**
 * Where each received message goes: decodes the type byte, checks that host-only messages come
 * from this peer's host, and hands the message to the part that holds its concept. Undecodable
 * messages are counted and reported (`protocol-error`), never thrown.
 * @internal
 */
export class MessageDispatch {
  /** Host-only messages ignored because their sender is not this peer's host. */
  ignoredMessages = 0;

  constructor(private readonly s: DispatchTargets) {}

  /** Feeds one message received from `peer` on `channel`. */
  receive(peer: string, channel: string, data: Uint8Array): void {
    const s = this.s;
    const r = s.peers.byPeer.get(peer);
    try {
      if (r === undefined) {
        if (s.role.isHost && channel === CONTROL_CHANNEL && data[0] === MessageType.Spectate) {
          s.spectators.add(peer);
          return;
        }
        throw new DecodeError('unknown-type', 0, `message from unknown peer ${peer}`);
      }
      if (!r.connected) {
        // A peer this one dropped: the host tells it that it was removed; a LEAVE naming this
        // peer's own player still counts (this peer may have dropped the host that removed it).
        const leave = data[0] === MessageType.Decision ? data.subarray(2) : data;
        if (leave[0] === MessageType.Leave && leave[1] === s.localPlayer) s.leaves.onLeave(leave);
        else s.leaves.tellRemoved(r, s.now(), s.interruptMs);
        return;
      }
      if (!r.incarnationSeen && s.entries.stale(r, data, channel !== CONTROL_CHANNEL && data[0] === MessageType.Input))
        return;
      s.peers.received(r, data.length);
      s.liveness.heard(r);
      if (data.length === 0) throw new DecodeError('truncated', 0, 'empty message');
      switch (data[0]) {
        case MessageType.Input:
          s.inputs.onInput(r, data);
          break;
        case INPUT_V1:
        case CHECKSUM_V1:
          throw versionError(data[0]);
        case MessageType.Leave:
        case MessageType.Enter:
        case MessageType.Mode:
        case MessageType.Load:
          this.decision(peer, data);
          break;
        case MessageType.Decision: {
          need(data, 3, 'DECISION');
          const inner = data.subarray(2);
          if (!isDecisionType(inner[0])) throw new DecodeError('bad-value', 2, `DECISION of message type ${inner[0]}`);
          // A copy of a decision applied already, or one ahead of a missing one (re-sent in order).
          if (s.role.isFrom(peer) && !s.role.expects(data[1]!)) break;
          this.decision(peer, inner);
          break;
        }
        case MessageType.Pause:
          if (!this.fromHost(peer)) break;
          s.commands.onPause(data);
          break;
        case MessageType.ModeRequest:
          s.modes.onModeRequest(r, data, s.delay());
          break;
        case MessageType.ReportRequest:
          // A host this peer itself finds without life may not remove, through this peer, a
          // player that is alive here (stalled behind that same host, like this peer): the request
          // waits until the host delivers again (answered then) or is dropped (void), unless the
          // host is stalled by an input this peer holds (a player starved it: README, rule 5).
          if (this.fromHost(peer) && !(r.interrupted && this.aliveHere(data[1]!) && !s.liveness.starvedHere(r)))
            s.leaves.onReportRequest(r, data);
          else s.leaves.deferReportRequest(r, data);
          break;
        case MessageType.Report:
          s.leaves.onReport(peer, data);
          break;
        case MessageType.End:
          s.onEnd(r, data);
          break;
        case MessageType.Dropped:
          s.disconnectPeer(peer);
          break;
        case MessageType.Lost:
          // Only the host decides between the two (a LOST to a non-host: the sender follows another).
          if (s.role.isHost) s.drops.onLost(r, data, s.now());
          else this.ignoredMessages++;
          break;
        case MessageType.Joined: {
          if (!this.fromHost(peer)) break;
          const m = decodeByteFrameTail(data, 'JOINED');
          s.emitter.emit('spectator-joined', { peer: new TextDecoder().decode(m.tail), frame: m.frame });
          break;
        }
        default:
          throw new DecodeError('unknown-type', 0, `message type ${data[0]}`);
      }
    } catch (e) {
      if (
        !(e instanceof DecodeError) &&
        !(e instanceof RollbackError && (e.code === 'protocol' || e.code === 'version'))
      )
        throw e;
      if (r !== undefined) r.badMessages++;
      s.emitter.emit('protocol-error', { peer, error: e });
    }
  }

  /** A decision (LEAVE, ENTER, MODE, LOAD) from `peer`: applied when it is this peer's host. */
  private decision(peer: string, data: Uint8Array): void {
    const s = this.s;
    switch (data[0]) {
      case MessageType.Leave:
        if (this.fromHost(peer)) {
          s.role.applied(data);
          s.leaves.onLeave(data);
        } else if (data[1] === s.localPlayer) {
          // Removed by a host this peer does not follow (it was replaced, or this peer elected
          // another): ending is always safe.
          s.leaves.onLeave(data);
        }
        break;
      case MessageType.Enter:
        if (!this.fromHost(peer)) break;
        s.role.applied(data);
        s.entries.onEnter(data);
        break;
      case MessageType.Load:
        if (!this.fromHost(peer)) break;
        s.commands.onLoad(data);
        break;
      default:
        if (!this.fromHost(peer)) break;
        s.role.applied(data);
        s.modes.onMode(data);
    }
  }

  /** Whether remote player `player` is connected and not interrupted at this peer. */
  private aliveHere(player: number): boolean {
    const p = this.s.peers.list.find((x) => x.player === player);
    return p?.connected === true && !p.interrupted;
  }

  /**
   * Whether a host-only message from `peer` is to be applied. One from another peer is ignored (not
   * an error): after a partition a peer may have elected itself host while this one kept the old.
   */
  private fromHost(peer: string): boolean {
    if (this.s.role.isFrom(peer)) return true;
    this.ignoredMessages++;
    return false;
  }
}
