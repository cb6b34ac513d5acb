/**
 * The parts of rrweb's event format that session metadata is computed from (rrweb's `@rrweb/types`, as posthog-js
 * sends them). Numbers, not names: they are what arrives on the wire and what a stored recording keeps.
 */

/** `event.type`. */
export const EventType = {
  DomContentLoaded: 0,
  Load: 1,
  FullSnapshot: 2,
  IncrementalSnapshot: 3,
  Meta: 4,
  Custom: 5,
  Plugin: 6,
} as const;

/** `event.data.source` of an IncrementalSnapshot. */
export const IncrementalSource = {
  Mutation: 0,
  MouseMove: 1,
  MouseInteraction: 2,
  Scroll: 3,
  ViewportResize: 4,
  Input: 5,
  TouchMove: 6,
  MediaInteraction: 7,
  StyleSheetRule: 8,
  CanvasMutation: 9,
  Font: 10,
  Log: 11,
  Drag: 12,
  StyleDeclaration: 13,
  Selection: 14,
  AdoptedStyleSheet: 15,
} as const;

/** `event.data.type` of a MouseInteraction. */
export const MouseInteraction = {
  MouseUp: 0,
  MouseDown: 1,
  Click: 2,
  ContextMenu: 3,
  DblClick: 4,
  Focus: 5,
  Blur: 6,
  TouchStart: 7,
  TouchMoveDeparted: 8,
  TouchEnd: 9,
  TouchCancel: 10,
} as const;

/** The plugin name posthog-js' console capture gives its events (`data.plugin` of a Plugin event). */
export const CONSOLE_PLUGIN = 'rrweb/console@1';

/** One rrweb event as far as the fold reads it: anything else in it is kept as sent and never interpreted. */
export interface RrwebEvent {
  type: number;
  timestamp: number;
  data?: unknown;
}

/** Whether a value has the two fields every rrweb event has (a number `type` and a finite `timestamp`). */
export function isRrwebEvent(value: unknown): value is RrwebEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as { type?: unknown; timestamp?: unknown };
  return typeof e.type === 'number' && typeof e.timestamp === 'number' && Number.isFinite(e.timestamp);
}
