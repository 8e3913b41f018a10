import type { LobbyClient } from '@netplay/lobby';
import type { LobbyRoom } from './game.js';
import type { PageParams } from './params.js';
import { hostAnnouncement } from './rooms.js';

/**
 * Announces the hosting page's game on a lobby (heartbeats by `LobbyClient.announce`) and returns
 * the lobby's signaling URL and the room to host in (the lobby's room id is the signaling room).
 * The announcement follows the player count and is deleted when the page stops hosting.
 */
export async function announceRoom(
  client: LobbyClient,
  params: PageParams,
): Promise<{ signal: string; lobbyRoom: LobbyRoom }> {
  const body = (players: number) =>
    hostAnnouncement(params.nick, players, params.players, params.password !== undefined);
  const announcement = await client.announce(body(1));
  const info = await client.join(announcement.id).catch(async (e: unknown) => {
    await announcement.close();
    throw e;
  });
  if (info.signaling === undefined) {
    await announcement.close();
    throw new Error(`the lobby ${client.baseUrl} has no WebRTC signaling: cannot host a room there`);
  }
  let last = 1;
  let left = false;
  return {
    signal: info.signaling.url,
    lobbyRoom: {
      room: announcement.id,
      players: (count) => {
        if (left || count === last) return;
        last = count;
        void announcement.update(body(count));
      },
      leave: () => {
        if (left) return;
        left = true;
        void announcement.close();
      },
    },
  };
}
