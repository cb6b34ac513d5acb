/**
 * Dashboard tile placement on a 12-column grid, in PostHog's stored shape (`layouts: {sm: {x, y, w, h}}`, column and
 * row units). Pure functions: the grid component calls them while a tile is dragged or resized, and stores what
 * changed. The rule: tiles are taken in reading order, each rising as high as it can without overlapping those
 * before it, so the grid has neither overlaps nor holes above a tile. A tile dragged down passes a tile once its
 * bottom is beyond that tile's middle, dragged up once its top is above it: the two swap places.
 */
export const COLUMNS = 12;
export const MIN_W = 3;
export const MIN_H = 3;
const DEFAULT_W = 6;
const DEFAULT_H = 5;

export interface Cell {
  x: number;
  y: number;
  w: number;
  h: number;
}

export type Placement = Map<number, Cell>;

const int = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : fallback);

/** A cell kept inside the grid and above the minimum size. */
export function clampCell(c: Cell): Cell {
  const w = Math.min(COLUMNS, Math.max(MIN_W, c.w));
  return { w, h: Math.max(MIN_H, c.h), x: Math.min(COLUMNS - w, Math.max(0, c.x)), y: Math.max(0, c.y) };
}

const overlaps = (a: Cell, b: Cell) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** Tiles in the order of `rank` (then left to right), each as high as it can go without overlapping earlier ones. */
function compact(cells: Placement, rank: (id: number, c: Cell) => number): Placement {
  const order = [...cells].sort(([a, ca], [b, cb]) => rank(a, ca) - rank(b, cb) || ca.x - cb.x || a - b);
  const placed: Cell[] = [];
  const out: Placement = new Map();
  for (const [id, cell] of order) {
    const c = { ...cell, y: 0 };
    while (placed.some((p) => overlaps(p, c))) c.y++;
    placed.push(c);
    out.set(id, c);
  }
  return out;
}

/**
 * The placement of tiles from their stored layouts: tiles without one (new on the dashboard) go after the others,
 * two per row; overlaps left by other clients are resolved by the same rule.
 */
export function placementOf(tiles: { id: number; layouts: Record<string, unknown> | null | undefined }[]): Placement {
  const cells: Placement = new Map();
  let bottom = 0;
  const unplaced: number[] = [];
  for (const t of tiles) {
    const sm = t.layouts?.sm as Partial<Record<keyof Cell, unknown>> | undefined;
    if (!sm || typeof sm !== 'object') {
      unplaced.push(t.id);
      continue;
    }
    const c = clampCell({ x: int(sm.x, 0), y: int(sm.y, 0), w: int(sm.w, DEFAULT_W), h: int(sm.h, DEFAULT_H) });
    cells.set(t.id, c);
    bottom = Math.max(bottom, c.y + c.h);
  }
  unplaced.forEach((id, i) => cells.set(id, { x: (i % 2) * DEFAULT_W, y: bottom + Math.floor(i / 2) * DEFAULT_H, w: DEFAULT_W, h: DEFAULT_H }));
  return compact(cells, (_, c) => c.y);
}

/** The placement after tile `id` is moved or resized to `to` (a resize keeps its top: it goes first among its row). */
export function moveTile(cells: Placement, id: number, to: Cell): Placement {
  const from = cells.get(id);
  if (!from) return cells;
  const target = clampCell(to);
  const next: Placement = new Map(cells);
  next.set(id, target);
  const movedRank = target.y > from.y ? target.y + target.h : target.y < from.y ? target.y : target.y - 0.25;
  return compact(next, (tile, c) => (tile === id ? movedRank : c.y + c.h / 2));
}

/** The tiles whose cell differs between two placements (what a PATCH has to store). */
export function changedCells(before: Placement, after: Placement): [number, Cell][] {
  return [...after].filter(([id, c]) => {
    const b = before.get(id);
    return !b || b.x !== c.x || b.y !== c.y || b.w !== c.w || b.h !== c.h;
  });
}
