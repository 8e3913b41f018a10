import { ClientServerClient, type LockstepRunner } from '@netplay/lockstep';
import { CoreDriver, SpectatorSession } from '@netplay/rollback';
import type { ClientContext } from './client-context.js';
import type { ClientControl } from './client-control.js';
import { clientSender } from './client-dispatch.js';
import { clientRoutes, startClientRunner } from './client-lockstep.js';
import type { JoinInfo } from './client-options.js';
import { trackEntries } from './client-rollback-join.js';
import { SessionError } from './errors.js';
import type { FinalityScheduler } from './lockstep-finality.js';
import { SPECTATOR_SLOT, type SyncMessage } from './messages.js';
import { SUPPORTED_MODES } from './mode.js';
import { createP2PScheduler, isP2PLockstep, type P2PLockstepMode, p2pShape } from './p2p-lockstep.js';
import { startRollback } from './rollback-start.js';
import type { RoutedConnection } from './routed-connection.js';

const defaultRandomU32 = (): number => {
  const a = new Uint32Array(1);
  globalThis.crypto.getRandomValues(a);
  return a[0] ?? 0;
};

/**
 * Checks SYNC (a mode this client runs, a player slot within the players, the host's port layout,
 * which `control` takes) and returns what `joined` will say, or the `SessionError` to end with.
 */
export function joinInfoOf(
  control: ClientControl,
  m: SyncMessage,
  ch: { readonly nick: string; readonly hostNick: string },
): JoinInfo | SessionError {
  if (!SUPPORTED_MODES.includes(m.mode))
    return new SessionError('unsupported-mode', `the host runs mode ${m.mode}, which this client does not support`);
  const spectating = m.slot === SPECTATOR_SLOT;
  if (!spectating && (m.slot >= m.players || m.players < 2))
    return new SessionError('protocol', `bad slot ${m.slot} of ${m.players} players in SYNC`);
  const layoutError = control.sync(m);
  if (layoutError !== undefined) return layoutError;
  return {
    nick: ch.nick,
    hostNick: ch.hostNick,
    mode: m.mode,
    slot: spectating ? undefined : m.slot,
    players: m.players,
    inputDelay: m.inputDelay,
    frame: m.frame,
    roster: m.roster,
    ports: control.ports,
  };
}

/**
 * A checked SYNC: starts the game of its mode (a P2P lockstep player's scheduler and routes; a
 * lockstep-cs player or any lockstep spectator's client of the host's server; a rollback
 * spectator's `SpectatorSession`; a rollback player's `P2PSession` from the host's state), replays
 * the game messages that came first, and emits `joined`. `nick`: this client's; `hostNick`: the host's.
 * @throws RollbackError or LockstepError for a shape the scheduler cannot run (the caller maps it).
 */
export function startClientGame(
  c: ClientContext,
  m: SyncMessage,
  nick: string,
  hostNick: string,
  info: JoinInfo,
): void {
  const o = c.options;
  const g = c.game;
  const spectating = m.slot === SPECTATOR_SLOT;
  if (isP2PLockstep(m.mode) && !spectating) {
    startP2P(c, m.mode, m, info);
    return;
  }
  // lockstep-cs, and a spectator of any lockstep mode (the P2P host streams its frames on the same wire).
  if (m.mode !== 'rollback') {
    // A spectator is a watcher: it loads the state the server sends on `sync` and affects nothing.
    if (!loadHostState(c, m.state)) return;
    g.lockstepCore = c.control.schedulerCore(m.state);
    const cs = new ClientServerClient({
      watch: spectating,
      id: m.slot,
      server: 0,
      ports: m.players,
      inputBytes: c.control.slotBytes,
      frameMs: 1000 / (o.fps ?? 60),
    });

    const runner = startRunner(c, cs);
    g.runner = runner;
    c.enter(spectating ? 'spectating' : 'playing', info);
    const early = g.early.splice(0);
    for (const e of early) cs.receive(0, e.channel, e.data, o.clock.now());
    c.emitter.emit('joined', info);
    runner.addPeer(0, c.conn);
    return;
  }
  if (spectating) {
    const s = new SpectatorSession({ hostPeer: hostNick, send: clientSender(c) });
    g.watch = s;
    g.driver = new CoreDriver(c.control.schedulerCore(undefined), s.ringFrames);
    c.enter('spectating', info);
  } else {
    if (!loadHostState(c, m.state)) return;
    for (const e of m.roster)
      if (e.slot !== m.slot && e.slot !== 0 && e.slot < m.players) {
        g.slotOf.set(e.nick, e.slot);
        g.nickOf.set(e.slot, e.nick);
      }
    const { session: s, driver } = startRollback({
      core: c.control.schedulerCore(m.state),
      players: m.players,
      localPlayer: m.slot,
      remotes: m.roster
        .filter((e) => e.slot !== m.slot && e.slot < m.players)
        .map((e) => ({ peer: e.nick, player: e.slot })),
      isHost: false,
      hostPeer: hostNick,
      clock: o.clock,
      send: clientSender(c),
      inputDelay: m.inputDelay,
      fps: o.fps,
      maxPrediction: o.maxPrediction,
      checksumInterval: o.checksumInterval,
      join: g.entry,
      wait: (frames) => {
        g.wait = frames;
      },
      ended: (error) => c.fail(error),
    });
    g.p2p = s;
    c.offs.push(trackEntries(s, g.nickOf, g.slotOf, (n) => c.mesh()?.links.retire(n)));
    g.driver = driver;
    c.control.attachRollback(s);
    c.enter('playing', info);
    const mesh = c.mesh();
    if (mesh !== undefined) c.offs.push(...mesh.started(s, nick, m.slot));
  }
  const early = g.early.splice(0);
  for (const e of early) c.message(e.channel, e.data);
  c.emitter.emit('joined', info);
}

/** Loads the host's savestate from SYNC (none if empty); false (and the session failed) if it does not load. */
function loadHostState(c: ClientContext, state: Uint8Array): boolean {
  if (state.length === 0) return true;
  try {
    c.core.load(state);
    return true;
  } catch (e) {
    c.fail(new SessionError('protocol', `the host's savestate does not load: ${(e as Error).message}`));
    return false;
  }
}

/** lockstep-p2p and frame-advance: every other player is a routed connection over the one to the host. */
function startP2P(c: ClientContext, mode: P2PLockstepMode, m: SyncMessage, info: JoinInfo): void {
  const o = c.options;
  const g = c.game;
  if (!loadHostState(c, m.state)) return;
  g.lockstepCore = c.control.schedulerCore(m.state);
  const shape = p2pShape(mode);
  const slots = [...new Set(m.roster.filter((e) => e.slot < m.players).map((e) => e.slot))];
  if (!slots.includes(0) || !slots.includes(m.slot)) {
    c.fail(new SessionError('protocol', `the roster in SYNC lacks the host or slot ${m.slot}`));
    return;
  }
  const frameMs = 1000 / (o.fps ?? 60);
  const scheduler = createP2PScheduler(mode, {
    slot: m.slot,
    slots,
    ports: m.players,
    inputBytes: c.control.slotBytes,
    frameMs,
    // A player entering a running game (frame-advance) counts its frames from the host's.
    startMs: o.clock.now() - m.frame * frameMs,
    seed: (o.randomU32 ?? defaultRandomU32)() >>> 0,
    extraDelayMs: m.inputDelay * frameMs,
    ...(m.frame > 0 ? { candidate: true } : {}),
  });
  // A route to every slot, taken or not: a player entering later is reached without a new one.
  const every = Array.from({ length: m.players }, (_, s) => s);
  const routes = clientRoutes(c.conn, shape, every, m.slot);
  g.routed = { shape, routes };
  c.enter('playing', info);
  g.runner = startRunner(c, scheduler, routes);
  c.emitter.emit('joined', info);
  const early = g.early.splice(0);
  for (const e of early) c.message(e.channel, e.data);
}

/**
 * Lockstep: the runner, with the finality rule's events handled: `final` events, and the
 * scheduler's end (removed, host lost) ends the session with that `SessionError`.
 */
function startRunner(
  c: ClientContext,
  scheduler: FinalityScheduler,
  peers?: Map<number, RoutedConnection>,
): LockstepRunner {
  const { runner, finality } = startClientRunner(
    c.options.clock,
    c.game.lockstepCore ?? c.core,
    scheduler,
    {
      final: (frame) => c.emitter.emit('final', { frame }),
      frame: (req) =>
        c.emitter.emit('frame', { frame: req.frame, inputs: c.control.lockstepFrame(req.frame, req.inputs) }),
      ended: (error) => c.fail(error),
    },
    peers,
  );
  c.game.finality = finality;
  return runner;
}
