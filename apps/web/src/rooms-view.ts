/**
 * The rooms page's DOM half: the lobby's rooms in a table, kept live by the lobby's feed
 * (`LobbyClient.watch`), filtered by name and free slots, joined with a click.
 */
import { type LobbyClient, LobbyError, type RoomInfo } from '@netplay/lobby';
import { applyFeed, joinTarget, joinUrl, type RoomRow, roomRows } from './rooms.js';

/** The elements of the rooms section (see index.html). */
export interface RoomsElements {
  readonly section: HTMLElement;
  readonly body: HTMLTableSectionElement;
  readonly filter: HTMLInputElement;
  readonly openOnly: HTMLInputElement;
  readonly note: HTMLElement;
}

const ROUTE_LABEL = { webrtc: 'WebRTC', ws: 'WebSocket', relay: 'relay' } as const;

function cell(text: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text; // names come from strangers: text only, never HTML
  return td;
}

function rowOf(r: RoomRow, onJoin: (id: string) => void): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.room = r.id;
  tr.append(
    cell(r.name),
    cell(r.game),
    cell(r.mode),
    cell(r.players),
    cell(r.password ? 'yes' : ''),
    cell(r.route === undefined ? 'UDP only' : ROUTE_LABEL[r.route]),
  );
  const td = document.createElement('td');
  const button = document.createElement('button');
  button.type = 'button';
  button.dataset.join = r.id;
  button.textContent = r.full ? 'Watch' : 'Join';
  button.disabled = r.route === undefined;
  button.addEventListener('click', () => onJoin(r.id));
  td.append(button);
  tr.append(td);
  return tr;
}

/**
 * Shows the lobby's rooms and keeps them current until the returned function is called. A click
 * asks the lobby how to reach the room and opens the page that joins it (this page's own settings
 * kept, see `joinUrl`). The feed reconnects 2 s after it drops.
 */
export function showRooms(client: LobbyClient, el: RoomsElements, page: { href: string; assign(url: string): void }) {
  const rooms = new Map<string, RoomInfo>();
  let stopped = false;
  let stopFeed: (() => void) | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const render = (): void => {
    const rows = roomRows(rooms.values(), { text: el.filter.value, openOnly: el.openOnly.checked });
    el.body.replaceChildren(...rows.map((r) => rowOf(r, join)));
    el.note.textContent = `${rows.length} of ${rooms.size} room(s) on ${client.baseUrl}`;
  };
  const join = (id: string): void => {
    el.note.textContent = `joining room ${id}…`;
    client.join(id).then(
      (info) => {
        const target = joinTarget(info);
        if (target === undefined) el.note.textContent = `room ${id}: a browser cannot reach its host (UDP only)`;
        else page.assign(joinUrl(page.href, target));
      },
      (e: unknown) => {
        el.note.textContent = `room ${id}: ${e instanceof LobbyError ? `${e.code}: ${e.message}` : String(e)}`;
      },
    );
  };
  const watch = (): void => {
    if (stopped) return;
    try {
      stopFeed = client.watch(
        {},
        (msg) => {
          if (msg.type === 'refused') el.note.textContent = `the lobby refused the feed: ${msg.reason}`;
          else if (applyFeed(rooms, msg)) render();
        },
        () => {
          if (stopped) return;
          el.note.textContent = `lost the lobby ${client.baseUrl}; retrying…`;
          retry = setTimeout(watch, 2000);
        },
      );
    } catch (e) {
      el.note.textContent = `no feed: ${(e as Error).message}`;
    }
  };
  el.filter.addEventListener('input', render);
  el.openOnly.addEventListener('change', render);
  el.section.hidden = false;
  el.note.textContent = `loading the rooms of ${client.baseUrl}…`;
  watch();
  return (): void => {
    stopped = true;
    if (retry !== undefined) clearTimeout(retry);
    stopFeed?.();
    el.section.hidden = true;
  };
}
