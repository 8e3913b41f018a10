/** Which command id each {@link RetroArchMessage} type is sent with, and back. */
import { RetroArchCommand } from './commands.js';
import type { RetroArchMessage, RetroArchMessageType } from './message-types.js';

/** The command id of each message type. */
export const RETROARCH_COMMAND_OF: { readonly [T in RetroArchMessageType]: RetroArchCommand } = {
  ack: RetroArchCommand.Ack,
  nak: RetroArchCommand.Nak,
  disconnect: RetroArchCommand.Disconnect,
  input: RetroArchCommand.Input,
  noInput: RetroArchCommand.NoInput,
  nick: RetroArchCommand.Nick,
  password: RetroArchCommand.Password,
  info: RetroArchCommand.Info,
  sync: RetroArchCommand.Sync,
  spectate: RetroArchCommand.Spectate,
  play: RetroArchCommand.Play,
  mode: RetroArchCommand.Mode,
  modeRefused: RetroArchCommand.ModeRefused,
  crc: RetroArchCommand.Crc,
  requestSavestate: RetroArchCommand.RequestSavestate,
  loadSavestate: RetroArchCommand.LoadSavestate,
  pause: RetroArchCommand.Pause,
  resume: RetroArchCommand.Resume,
  stall: RetroArchCommand.Stall,
  reset: RetroArchCommand.Reset,
  playerChat: RetroArchCommand.PlayerChat,
  pingRequest: RetroArchCommand.PingRequest,
  pingResponse: RetroArchCommand.PingResponse,
  settingAllowPausing: RetroArchCommand.SettingAllowPausing,
  settingInputLatencyFrames: RetroArchCommand.SettingInputLatencyFrames,
};

/** Command id → message type, for the decoder and the encoder's check of unknown messages. */
export const TYPE_OF = new Map<number, RetroArchMessageType>(
  (Object.entries(RETROARCH_COMMAND_OF) as [RetroArchMessageType, RetroArchCommand][]).map(([t, c]) => [c, t]),
);

/** The message type of a command id, or `undefined` for an unknown one. */
export function retroArchMessageTypeOf(command: number): RetroArchMessageType | undefined {
  return TYPE_OF.get(command);
}

/** The command id a message is sent with. */
export function retroArchCommandOf(message: RetroArchMessage): number {
  return message.type === 'unknown' ? message.command : RETROARCH_COMMAND_OF[message.type];
}
