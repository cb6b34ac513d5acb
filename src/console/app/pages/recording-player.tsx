/**
 * The recording player, a chunk of its own (rrweb's Replayer is most of its weight): loads a recording's snapshots
 * through the API (`sources`, then the blobs in groups of 100 keys, JSONL `[window_id, event]` lines), unpacks the
 * fields posthog-js compressed itself (`cv: "2024-10"`: gzip bytes as latin-1 strings) with the browser's
 * DecompressionStream, and plays them in rrweb's Replayer from the rrweb fork posthog-js ships. Images and fonts
 * of the recorded site do not load (the console's Content-Security-Policy admits this origin only): the layout,
 * text, inputs (as recorded: masked) and the mouse replay.
 */
import { Replayer, type eventWithTime } from 'posthog-js/rrweb';
import { api } from '../api';
import { timelineClock } from '../lib/recording-timeline';

/** PostHog's bound on one snapshots request. */
const BLOBS_PER_REQUEST = 100;
const FIRST_GROUP = 10;
/** Events unpacked between two chances for the page to draw. */
const YIELD_EVERY = 500;

interface Source {
  blob_key: string;
}

async function gunzipLatin1(text: string): Promise<unknown> {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return JSON.parse(await new Response(stream).text());
}

const isPacked = (v: unknown): v is string => typeof v === 'string' && v.charCodeAt(0) === 0x1f && v.charCodeAt(1) === 0x8b;

/** An event with the fields posthog-js gzipped restored (a full snapshot's data, a mutation's or style rule's lists). */
async function unpack(event: Record<string, unknown>): Promise<eventWithTime> {
  if (event.cv === undefined) return event as unknown as eventWithTime;
  const { cv: _version, ...rest } = event;
  if (isPacked(rest.data)) return { ...rest, data: await gunzipLatin1(rest.data) } as unknown as eventWithTime;
  const data = { ...(rest.data as Record<string, unknown>) };
  for (const [k, v] of Object.entries(data)) if (isPacked(v)) data[k] = await gunzipLatin1(v);
  return { ...rest, data } as unknown as eventWithTime;
}

/**
 * A recording's events, a group of blobs at a time (blob keys in order, each group's events in time order):
 * `onGroup(events, done, total)` after each group, so that the player can start on the first one while the rest
 * of a long recording arrives. `onGroup` returning false stops the loading (the page was left).
 */
export async function streamSnapshots(base: string, onGroup: (events: eventWithTime[], done: number, total: number) => boolean): Promise<void> {
  const { sources } = await api.get<{ sources: Source[] }>(`${base}/snapshots`);
  const keys = sources.map((s) => Number(s.blob_key)).sort((a, b) => a - b);
  if (keys.length === 0) onGroup([], 0, 0);
  // A small first group: the player needs only the recording's first full snapshot to draw its first frame.
  for (let i = 0, size = FIRST_GROUP; i < keys.length; i += size, size = BLOBS_PER_REQUEST) {
    const group = keys.slice(i, i + size);
    const res = await fetch(`${base}/snapshots?source=blob_v2&start_blob_key=${group[0]}&end_blob_key=${group[group.length - 1]}`, { credentials: 'same-origin' });
    if (!res.ok) throw new Error(`snapshots: HTTP ${res.status}`);
    const events: eventWithTime[] = [];
    for (const line of (await res.text()).split('\n')) {
      if (!line) continue;
      const [, event] = JSON.parse(line) as [string, Record<string, unknown>];
      events.push(await unpack(event));
      // Let the page draw (the player already playing the first group) between slices of a large group.
      if (events.length % YIELD_EVERY === 0) await new Promise((r) => setTimeout(r, 0));
    }
    events.sort((a, b) => a.timestamp - b.timestamp);
    if (!onGroup(events, Math.min(keys.length, i + group.length), keys.length)) return;
  }
}

export interface Player {
  /** Events that arrived after the player started (a later group of blobs), added to what it plays. */
  add(events: eventWithTime[]): void;
  /** Moves to `ms` after the recording's start, playing on if it was playing. */
  seek(ms: number): void;
  /** Epoch ms of the recording's first event (offsets of the session's events are counted from it). */
  startTime(): number;
  destroy(): void;
}

/** PostHog's player speeds. */
export const SPEEDS = [0.5, 1, 2, 4, 8, 16];

function element<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> & { testId?: string } = {}): HTMLElementTagNameMap[K] {
  const { testId, ...rest } = props;
  const el = Object.assign(document.createElement(tag), rest);
  if (testId) el.dataset.testid = testId;
  return el;
}

/**
 * Plays `events` in `root` with its controls: play/pause, a seek bar, the time played, the speed and whether
 * inactive stretches are skipped (on by default, as PostHog's player). `destroy` stops and empties it.
 */
export function mountPlayer(root: HTMLElement, events: eventWithTime[]): Player {
  root.replaceChildren();
  if (events.length < 2) {
    root.textContent = 'Too few events to play.';
    return { add: () => undefined, seek: () => undefined, startTime: () => events[0]?.timestamp ?? 0, destroy: () => root.replaceChildren() };
  }
  const screen = element('div', { className: 'replay-screen' });
  const toggle = element('button', { type: 'button', testId: 'player-toggle' });
  const bar = element('input', { type: 'range', min: '0', step: '100', value: '0', className: 'replay-seek', testId: 'player-seek' });
  bar.setAttribute('aria-label', 'Position in the recording');
  const clock = element('span', { testId: 'player-clock' });
  const speed = element('select', { testId: 'player-speed', title: 'Speed' });
  for (const x of SPEEDS) speed.append(element('option', { value: String(x), textContent: `${x}×`, selected: x === 1 }));
  const skip = element('input', { type: 'checkbox', checked: true, testId: 'player-skip-inactive' });
  const skipLabel = element('label', { className: 'replay-skip' });
  skipLabel.append(skip, ' skip inactivity');
  const controls = element('div', { className: 'replay-controls' });
  controls.append(toggle, bar, clock, speed, skipLabel);
  root.append(screen, controls);
  const replayer = new Replayer(events, { root: screen, skipInactive: true, showWarning: false, mouseTail: false, triggerFocus: false });
  // It grows as later groups of blobs are added.
  const total = () => replayer.getMetaData().totalTime;
  let playing = true;
  const render = () => {
    const now = Math.min(total(), replayer.getCurrentTime());
    toggle.textContent = playing ? 'Pause' : 'Play';
    clock.textContent = ` ${timelineClock(now)} / ${timelineClock(total())}`;
    bar.max = String(total());
    // Not while the user drags it.
    if (document.activeElement !== bar) bar.value = String(now);
  };
  const seek = (ms: number) => {
    const at = Math.max(0, Math.min(total(), ms));
    if (playing) replayer.play(at);
    else replayer.pause(at);
    render();
  };
  toggle.onclick = () => {
    if (playing) replayer.pause();
    else replayer.play(replayer.getCurrentTime() >= total() ? 0 : replayer.getCurrentTime());
    playing = !playing;
    render();
  };
  bar.onchange = () => seek(Number(bar.value));
  speed.onchange = () => replayer.setConfig({ speed: Number(speed.value) });
  skip.onchange = () => replayer.setConfig({ skipInactive: skip.checked });
  replayer.on('finish', () => {
    playing = false;
    render();
  });
  replayer.play();
  render();
  const tick = setInterval(render, 250);
  return {
    add(later) {
      for (const e of later) replayer.addEvent(e);
      // The Replayer takes each event in a microtask of its own: draw the new total after them.
      queueMicrotask(render);
    },
    seek,
    startTime: () => replayer.getMetaData().startTime,
    destroy() {
      clearInterval(tick);
      replayer.pause();
      (replayer as unknown as { destroy?: () => void }).destroy?.();
      root.replaceChildren();
    },
  };
}
